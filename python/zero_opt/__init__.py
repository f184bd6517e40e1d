"""zero-opt's Python side: importing PyTorch models (zero_opt.torch) and
reading and writing safetensors (zero_opt.safetensors)."""
