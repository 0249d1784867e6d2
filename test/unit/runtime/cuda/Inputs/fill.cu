// A stand-in for an artifact's kernels.fatbin (GeneratedKernelsTest.cpp):
// one function with the generated kernels' name and calling convention (the
// output's pointer last, a grid-stride loop over a baked-in size) that fills
// four floats with VALUE, given when the fatbin is compiled.
extern "C" __global__ void shardc_fused_0(float *out) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < 4; i += gridDim.x * blockDim.x)
    out[i] = VALUE;
}
