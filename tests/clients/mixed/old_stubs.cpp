// Link-time stand-ins for an older major version of cuBLAS and cuDNN (libcublas.so.12, libcudnn.so.8):
// they give mixed_calls_old the versioned references a build against those libraries has. Never loaded:
// at run time the loader finds the real libraries, copied and renamed by the test (elf_rename.h).

extern "C" {
#ifdef TUNEUP_STUB_CUBLAS
void cublasSgemm_v2() {
}
#else
void cudnnConvolutionForward() {
}
#endif
}
