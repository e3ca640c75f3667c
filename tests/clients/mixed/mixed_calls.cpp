// One framework's calls into its own copy of cuBLAS and cuDNN, for the mixed-libraries test: built twice,
// against the toolkit's real libcublas.so.13 and libcudnn.so.9 ("current") and against an older major
// version ("old": libcublas.so.12, libcudnn.so.8, linked through stubs of their symbol versions). The
// GEMM's M says which build made the call (TUNEUP_MIXED_M). Without a GPU both calls fail in the library.

#include <cublas_v2.h>
#include <cudnn.h>

extern "C" __attribute__((visibility("default"))) void tuneup_mixed_calls(int* gemmStatus, int* convStatus) {
    const float one = 1;
    *gemmStatus = int(cublasSgemm_v2(nullptr, CUBLAS_OP_N, CUBLAS_OP_N, TUNEUP_MIXED_M, 64, 32, &one, nullptr,
        TUNEUP_MIXED_M, nullptr, 32, &one, nullptr, TUNEUP_MIXED_M));
    *convStatus = int(cudnnConvolutionForward(nullptr, &one, nullptr, nullptr, nullptr, nullptr, nullptr,
        CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM, nullptr, 0, &one, nullptr, nullptr));
}
