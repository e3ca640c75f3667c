#pragma once
// The library functions the agent interposes, numbered so a recorded call names its function with two
// bytes; the writer turns the number into the name it interns (gemm_calls.name_id, conv_calls.name_id).

#include <cstdint>
#include <string_view>

namespace tuneup::agent {

#define TUNEUP_LIBRARY_FUNCTIONS(X)                                                                                    \
    X(CublasSgemm, "cublasSgemm_v2")                                                                                   \
    X(CublasSgemm64, "cublasSgemm_v2_64")                                                                              \
    X(CublasHgemm, "cublasHgemm")                                                                                      \
    X(CublasHgemm64, "cublasHgemm_64")                                                                                 \
    X(CublasDgemm, "cublasDgemm_v2")                                                                                   \
    X(CublasDgemm64, "cublasDgemm_v2_64")                                                                              \
    X(CublasGemmEx, "cublasGemmEx")                                                                                    \
    X(CublasGemmEx64, "cublasGemmEx_64")                                                                               \
    X(CublasSgemmStridedBatched, "cublasSgemmStridedBatched")                                                          \
    X(CublasSgemmStridedBatched64, "cublasSgemmStridedBatched_64")                                                     \
    X(CublasHgemmStridedBatched, "cublasHgemmStridedBatched")                                                          \
    X(CublasHgemmStridedBatched64, "cublasHgemmStridedBatched_64")                                                     \
    X(CublasGemmStridedBatchedEx, "cublasGemmStridedBatchedEx")                                                        \
    X(CublasGemmStridedBatchedEx64, "cublasGemmStridedBatchedEx_64")                                                   \
    X(CublasGemmBatchedEx, "cublasGemmBatchedEx")                                                                      \
    X(CublasGemmBatchedEx64, "cublasGemmBatchedEx_64")                                                                 \
    X(CublasLtMatmul, "cublasLtMatmul")                                                                                \
    X(CudnnConvolutionForward, "cudnnConvolutionForward")                                                              \
    X(CudnnConvolutionBackwardData, "cudnnConvolutionBackwardData")                                                    \
    X(CudnnConvolutionBackwardFilter, "cudnnConvolutionBackwardFilter")                                                \
    X(CudnnConvolutionBiasActivationForward, "cudnnConvolutionBiasActivationForward")                                  \
    X(CudnnFindForward, "cudnnFindConvolutionForwardAlgorithm")                                                        \
    X(CudnnFindForwardEx, "cudnnFindConvolutionForwardAlgorithmEx")                                                    \
    X(CudnnFindBackwardData, "cudnnFindConvolutionBackwardDataAlgorithm")                                              \
    X(CudnnFindBackwardDataEx, "cudnnFindConvolutionBackwardDataAlgorithmEx")                                          \
    X(CudnnFindBackwardFilter, "cudnnFindConvolutionBackwardFilterAlgorithm")                                          \
    X(CudnnFindBackwardFilterEx, "cudnnFindConvolutionBackwardFilterAlgorithmEx")                                      \
    X(CudnnGetForwardV7, "cudnnGetConvolutionForwardAlgorithm_v7")                                                     \
    X(CudnnGetBackwardDataV7, "cudnnGetConvolutionBackwardDataAlgorithm_v7")                                           \
    X(CudnnGetBackwardFilterV7, "cudnnGetConvolutionBackwardFilterAlgorithm_v7")                                       \
    X(CudnnBackendExecute, "cudnnBackendExecute")                                                                      \
    X(CudnnBackendFinalize, "cudnnBackendFinalize")

enum class LibraryFunction : uint16_t {
#define TUNEUP_ENUM(id, name) id,
    TUNEUP_LIBRARY_FUNCTIONS(TUNEUP_ENUM)
#undef TUNEUP_ENUM
        Count
};

// "cublasGemmEx"; "?" for a number out of range (a record from a damaged ring is never trusted).
std::string_view libraryFunctionName(uint16_t function);

} // namespace tuneup::agent
