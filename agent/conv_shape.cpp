#include "conv_shape.h"

#include "trace_schema.h"

#include <limits>

namespace tuneup::agent {

namespace {
int32_t narrow(int64_t v) {
    return v < 0 || v > std::numeric_limits<int32_t>::max() ? -1 : int32_t(v);
}
} // namespace

int8_t tensorLayout(int dims, const int64_t* sizes, const int64_t* strides) {
    if (dims < 3 || !sizes || !strides) return int8_t(schema::kLayoutOther);
    // Strides of size-1 dimensions say nothing; compare channels with the innermost spatial dimension.
    const int64_t channel = strides[1], inner = strides[dims - 1];
    if (sizes[1] == 1 || inner == channel)
        return int8_t(strides[dims - 1] == 1 ? schema::kLayoutNchw : schema::kLayoutOther);
    if (inner == 1 && channel > inner) return int8_t(schema::kLayoutNchw);
    if (channel == 1 && inner >= sizes[1]) return int8_t(schema::kLayoutNhwc);
    return int8_t(schema::kLayoutOther);
}

void setConvInput(ConvShape& s, int dims, const int64_t* sizes, const int64_t* strides, int dataType) {
    if (dims < 3 || dims > 5 || !sizes) return;
    s.n = narrow(sizes[0]);
    s.c = narrow(sizes[1]);
    if (dims == 5) s.d = narrow(sizes[2]);
    s.h = dims >= 4 ? narrow(sizes[dims - 2]) : 1; // 1-D: a 1 x W image
    s.w = narrow(sizes[dims - 1]);
    s.dataType = dataType;
    s.layout = tensorLayout(dims, sizes, strides);
}

void setConvFilter(ConvShape& s, int dims, const int64_t* sizes) {
    if (dims < 3 || dims > 5 || !sizes) return;
    s.k = narrow(sizes[0]);
    s.filterC = narrow(sizes[1]);
    if (dims == 5) s.t = narrow(sizes[2]);
    s.r = dims >= 4 ? narrow(sizes[dims - 2]) : 1;
    s.s = narrow(sizes[dims - 1]);
}

void setConvGeometry(ConvShape& s, int spatial, const int64_t* pads, const int64_t* strides, const int64_t* dilations) {
    if (spatial < 1 || spatial > 3) return;
    // Spatial dimension i of `spatial` goes to slot (3 - spatial + i): d, h, w with w last.
    for (int i = 0; i < spatial; ++i) {
        const int slot = 3 - spatial + i;
        if (pads) s.pad[slot] = narrow(pads[i]);
        if (strides) s.stride[slot] = narrow(strides[i]);
        if (dilations) s.dilation[slot] = narrow(dilations[i]);
    }
}

void inferConvGroups(ConvShape& s) {
    if (s.groups <= 0 && s.c > 0 && s.filterC > 0 && s.c % s.filterC == 0) s.groups = s.c / s.filterC;
}

} // namespace tuneup::agent
