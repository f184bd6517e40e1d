set -o pipefail
export PATH=/usr/local/cuda/bin:$PATH
nvcc -O2 -arch=sm_90 benchmarks/gpu/diag/gemm16.cu -lcublasLt -lcublas -o /tmp/gemm16 2>&1 | grep -v warning | head -5
/tmp/gemm16 2>&1 | tee $OUT/gemm16.log
pip_nccl=$(python3 -c 'import nvidia.nccl as n; print(list(n.__path__)[0])')
nccl_root=$PWD/build-gpu-deps/nccl; rm -rf $nccl_root; mkdir -p $nccl_root/include $nccl_root/lib
for f in "$pip_nccl"/include/*; do ln -s "$f" $nccl_root/include/; done
lib=$(ls "$pip_nccl"/lib/libnccl.so* | head -1); ln -s "$lib" $nccl_root/lib/libnccl.so; ln -s "$lib" $nccl_root/lib/libnccl.so.2
export LD_LIBRARY_PATH=$nccl_root/lib
cmake -G Ninja -S runtime -B build-gpu -DCMAKE_BUILD_TYPE=Release -DZERO_RUNTIME_BUILD_TESTS=ON -DCMAKE_CUDA_ARCHITECTURES=90 -DZERO_NCCL_ROOT=$nccl_root > $OUT/configure.log 2>&1 || { tail -30 $OUT/configure.log; exit 1; }
ninja -C build-gpu -j16 zero-runtime-gpu-tests zero-runtime-gpu-memory-tests zero-runtime-codegen-tests > $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
ctest --test-dir build-gpu -R 'Gpu|Cuda|Nccl' -j 4 --timeout 180 --output-on-failure > $OUT/ctest.log 2>&1
grep -E 'tests passed|tests failed|\*\*\*Failed|\*\*\*Skipped|Timeout' $OUT/ctest.log
