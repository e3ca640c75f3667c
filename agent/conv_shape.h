#pragma once
// A convolution's shape (host_events.h ConvShape) from what cuDNN's descriptors hold, for the legacy and
// the backend API alike: tensors as N-d dims and strides in NCHW order (cuDNN's logical order, whatever
// the memory layout), filters as K, C per group, spatial dims. Pure functions.

#include "host_events.h"

#include <cstdint>

namespace tuneup::agent {

// The input x (dx for backward data): N, C, [D,] H, W, its data type and memory layout.
void setConvInput(ConvShape& shape, int dims, const int64_t* sizes, const int64_t* strides, int dataType);
// The filter: K, C per group, [T,] R, S.
void setConvFilter(ConvShape& shape, int dims, const int64_t* sizes);
// Paddings, strides and dilations of the `spatial` (2 or 3) spatial dimensions, outermost first.
void setConvGeometry(
    ConvShape& shape, int spatial, const int64_t* pads, const int64_t* strides, const int64_t* dilations);
// Groups = input channels / filter channels, when cuDNN did not say.
void inferConvGroups(ConvShape& shape);
// schema::TensorLayout of an N-d tensor from its strides: channels outside the spatial dims (NCHW),
// innermost (NHWC), or anything else.
int8_t tensorLayout(int dims, const int64_t* sizes, const int64_t* strides);

} // namespace tuneup::agent
