// spec_ptx.cpp — one kernel variant's PTX and cubin from a kernels/ tree on disk, for bisecting SASS differences
// between two versions of the device code without a full compile-check (forty-first session: the kernel split).
// Renders the variant's translation unit (jit::KernelSpec::render, as the library does) and compiles it with NVRTC
// with the library's options, but with -I KERNELS_DIR instead of the embedded headers, so that the same variant can
// be compiled against any checkout's kernels/ (e.g. `git archive HEAD kernels | tar -x -C /tmp/before`).
// Prints the ptxas resource report. Build and run: lab/probes/spec_ptx.sh NAME KERNELS_DIR OUT_PTX OUT_CUBIN
#include <nvrtc.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "choices/registry.hpp"
#include "jit/jit.hpp"

int main(int argc, char** argv) {
  if (argc != 5) {
    std::fprintf(stderr, "usage: spec_ptx NAME KERNELS_DIR OUT_PTX OUT_CUBIN\n");
    return 2;
  }
  const std::string name = argv[1];
  for (const auto& spec : tmagemm::choices::all_kernel_specs()) {
    if (spec.name != name) continue;
    const std::string src = spec.render();
    nvrtcProgram prog;
    nvrtcCreateProgram(&prog, src.c_str(), "spec.cu", 0, nullptr, nullptr);
    nvrtcAddNameExpression(prog, spec.kernel.c_str());
    std::vector<std::string> opts = tmagemm::jit::nvrtc_options(spec, "sm_90a", true);
    // The embedded headers are not registered here: the kernels directory on disk stands in for them.
    std::erase_if(opts, [](const std::string& o) { return o.rfind("-pch", 0) == 0 || o.rfind("--pch", 0) == 0; });
    opts.push_back(std::string("-I") + argv[2]);
    std::vector<const char*> copts;
    for (const auto& o : opts) copts.push_back(o.c_str());
    const nvrtcResult rc = nvrtcCompileProgram(prog, static_cast<int>(copts.size()), copts.data());
    size_t n = 0;
    nvrtcGetProgramLogSize(prog, &n);
    std::string log(n, '\0');
    nvrtcGetProgramLog(prog, log.data());
    std::fputs(log.c_str(), stderr);
    if (rc != NVRTC_SUCCESS) return 1;
    nvrtcGetPTXSize(prog, &n);
    std::string ptx(n, '\0');
    nvrtcGetPTX(prog, ptx.data());
    std::ofstream(argv[3]) << ptx.c_str();
    nvrtcGetCUBINSize(prog, &n);
    std::string cubin(n, '\0');
    nvrtcGetCUBIN(prog, cubin.data());
    std::ofstream(argv[4], std::ios::binary) << cubin;
    nvrtcDestroyProgram(&prog);
    return 0;
  }
  std::fprintf(stderr, "spec_ptx: no kernel variant named %s\n", name.c_str());
  return 1;
}
