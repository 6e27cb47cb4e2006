// The trainer's two models on a GPU: the same architectures, parameter layouts,
// initialisation and descriptions as make_image_mlp and make_token_classifier (so a
// checkpoint moves between --device cpu and gpu), computed with cuBLAS and
// cuda/train_kernels. Every span and every ModelInput pointer given to these models
// is device memory; forward_backward and evaluate return once the GPU has finished
// (they read the loss sums back). The CPU models are the reference they are tested
// against (tests/trainer/gpu_model_test.cpp).
#pragma once

#include <memory>

#include "cuda/gpu_runtime.h"
#include "trainer/model.h"

namespace evenfeed {

std::unique_ptr<Model> make_gpu_image_mlp(int image_size, int hidden, int classes,
                                          GpuStream stream);
std::unique_ptr<Model> make_gpu_token_classifier(uint32_t vocab, int dim, int hidden, int classes,
                                                 GpuStream stream);

}  // namespace evenfeed
