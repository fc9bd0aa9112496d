//go:build cuda

// Run-time loading of cuDNN, cuBLAS, NVRTC and NVML: each function the worker needs is a
// pointer filled by dlsym and a wrapper x_NAME that calls it (cgo cannot call pointers).
#include <dlfcn.h>
#include "libs.h"

typedef void* P;
typedef const void* CP;

// DECL declares a pointer to a library function, filled by dlsym, and a wrapper that
// calls it (cgo cannot call function pointers).
#define DECL(ret, name, params, args) static ret (*p_##name) params; ret x_##name params { return p_##name args; }

DECL(size_t, cudnnGetVersion, (void), ())
DECL(size_t, cudnnGetCudartVersion, (void), ())
DECL(int, cudnnCreate, (P* h), (h))
DECL(const char*, cudnnGetErrorString, (int s), (s))
DECL(int, cudnnCreateTensorDescriptor, (P* d), (d))
DECL(int, cudnnSetTensor4dDescriptor, (P d, int f, int t, int n, int c, int h, int w), (d, f, t, n, c, h, w))
DECL(int, cudnnDestroyTensorDescriptor, (P d), (d))
DECL(int, cudnnCreateFilterDescriptor, (P* d), (d))
DECL(int, cudnnSetFilter4dDescriptor, (P d, int t, int f, int k, int c, int h, int w), (d, t, f, k, c, h, w))
DECL(int, cudnnDestroyFilterDescriptor, (P d), (d))
DECL(int, cudnnCreateConvolutionDescriptor, (P* d), (d))
DECL(int, cudnnSetConvolution2dDescriptor, (P d, int ph, int pw, int sh, int sw, int dh, int dw, int mode, int t), (d, ph, pw, sh, sw, dh, dw, mode, t))
DECL(int, cudnnSetConvolutionGroupCount, (P d, int g), (d, g))
DECL(int, cudnnSetConvolutionMathType, (P d, int m), (d, m))
DECL(int, cudnnDestroyConvolutionDescriptor, (P d), (d))
DECL(int, cudnnGetConvolutionForwardAlgorithm_v7, (P h, P a, P b, P c, P d, int n, int* got, perf_t* r), (h, a, b, c, d, n, got, r))
DECL(int, cudnnGetConvolutionBackwardDataAlgorithm_v7, (P h, P a, P b, P c, P d, int n, int* got, perf_t* r), (h, a, b, c, d, n, got, r))
DECL(int, cudnnGetConvolutionBackwardFilterAlgorithm_v7, (P h, P a, P b, P c, P d, int n, int* got, perf_t* r), (h, a, b, c, d, n, got, r))
DECL(int, cudnnFindConvolutionForwardAlgorithmEx, (P h, P xd, CP x, P wd, CP w, P cd, P yd, P y, int n, int* got, perf_t* r, P ws, size_t wss), (h, xd, x, wd, w, cd, yd, y, n, got, r, ws, wss))
DECL(int, cudnnFindConvolutionBackwardDataAlgorithmEx, (P h, P wd, CP w, P dyd, CP dy, P cd, P dxd, P dx, int n, int* got, perf_t* r, P ws, size_t wss), (h, wd, w, dyd, dy, cd, dxd, dx, n, got, r, ws, wss))
DECL(int, cudnnFindConvolutionBackwardFilterAlgorithmEx, (P h, P xd, CP x, P dyd, CP dy, P cd, P dwd, P dw, int n, int* got, perf_t* r, P ws, size_t wss), (h, xd, x, dyd, dy, cd, dwd, dw, n, got, r, ws, wss))
DECL(int, cudnnGetConvolutionForwardWorkspaceSize, (P h, P a, P b, P c, P d, int algo, size_t* s), (h, a, b, c, d, algo, s))
DECL(int, cudnnGetConvolutionBackwardDataWorkspaceSize, (P h, P a, P b, P c, P d, int algo, size_t* s), (h, a, b, c, d, algo, s))
DECL(int, cudnnGetConvolutionBackwardFilterWorkspaceSize, (P h, P a, P b, P c, P d, int algo, size_t* s), (h, a, b, c, d, algo, s))
DECL(int, cudnnConvolutionForward, (P h, CP al, P xd, CP x, P wd, CP w, P cd, int algo, P ws, size_t wss, CP be, P yd, P y), (h, al, xd, x, wd, w, cd, algo, ws, wss, be, yd, y))
DECL(int, cudnnConvolutionBackwardData, (P h, CP al, P wd, CP w, P dyd, CP dy, P cd, int algo, P ws, size_t wss, CP be, P dxd, P dx), (h, al, wd, w, dyd, dy, cd, algo, ws, wss, be, dxd, dx))
DECL(int, cudnnConvolutionBackwardFilter, (P h, CP al, P xd, CP x, P dyd, CP dy, P cd, int algo, P ws, size_t wss, CP be, P dwd, P dw), (h, al, xd, x, dyd, dy, cd, algo, ws, wss, be, dwd, dw))
DECL(int, cudnnConvolutionBackwardBias, (P h, CP al, P dyd, CP dy, CP be, P dbd, P db), (h, al, dyd, dy, be, dbd, db))
DECL(int, cudnnAddTensor, (P h, CP al, P bd, CP b, CP be, P yd, P y), (h, al, bd, b, be, yd, y))
DECL(int, cudnnBatchNormalizationForwardTraining, (P h, int mode, CP al, CP be, P xd, CP x, P yd, P y, P sd, CP scale, CP bias, double f, P rm, P rv, double eps, P sm, P sv), (h, mode, al, be, xd, x, yd, y, sd, scale, bias, f, rm, rv, eps, sm, sv))
DECL(int, cudnnBatchNormalizationBackward, (P h, int mode, CP ad, CP bd, CP ap, CP bp, P xd, CP x, P dyd, CP dy, P dxd, P dx, P sd, CP scale, P dscale, P dbias, double eps, CP sm, CP sv), (h, mode, ad, bd, ap, bp, xd, x, dyd, dy, dxd, dx, sd, scale, dscale, dbias, eps, sm, sv))

DECL(int, cublasCreate_v2, (P* h), (h))
DECL(int, cublasSetMathMode, (P h, int m), (h, m))
DECL(int, cublasGetVersion_v2, (P h, int* v), (h, v))
DECL(int, cublasGemmEx, (P h, int ta, int tb, int m, int n, int k, CP al, CP a, int at, int lda, CP b, int bt, int ldb, CP be, P c, int ct, int ldc, int comp, int algo), (h, ta, tb, m, n, k, al, a, at, lda, b, bt, ldb, be, c, ct, ldc, comp, algo))

DECL(int, cublasLtCreate, (P* h), (h))
DECL(int, cublasLtMatmulDescCreate, (P* d, int compute, int scale), (d, compute, scale))
DECL(int, cublasLtMatmulDescSetAttribute, (P d, int attr, CP buf, size_t n), (d, attr, buf, n))
DECL(int, cublasLtMatmulDescDestroy, (P d), (d))
DECL(int, cublasLtMatrixLayoutCreate, (P* l, int type, unsigned long long rows, unsigned long long cols, long long ld), (l, type, rows, cols, ld))
DECL(int, cublasLtMatrixLayoutDestroy, (P l), (l))
DECL(int, cublasLtMatmulPreferenceCreate, (P* p), (p))
DECL(int, cublasLtMatmulPreferenceSetAttribute, (P p, int attr, CP buf, size_t n), (p, attr, buf, n))
DECL(int, cublasLtMatmulPreferenceDestroy, (P p), (p))
DECL(int, cublasLtMatmulAlgoGetHeuristic, (P h, P op, P a, P b, P c, P d, P pref, int n, lt_heuristic_t* r, int* got), (h, op, a, b, c, d, pref, n, r, got))
DECL(int, cublasLtMatmul, (P h, P op, CP al, CP a, P ad, CP b, P bd, CP be, CP c, P cd, P d, P dd, CP algo, P ws, size_t wss, P stream), (h, op, al, a, ad, b, bd, be, c, cd, d, dd, algo, ws, wss, stream))

DECL(int, nvrtcCreateProgram, (P* p, const char* src, const char* name, int n, const char* const* hs, const char* const* ns), (p, src, name, n, hs, ns))
DECL(int, nvrtcCompileProgram, (P p, int n, const char* const* opts), (p, n, opts))
DECL(int, nvrtcGetProgramLogSize, (P p, size_t* s), (p, s))
DECL(int, nvrtcGetProgramLog, (P p, char* log), (p, log))
DECL(int, nvrtcGetPTXSize, (P p, size_t* s), (p, s))
DECL(int, nvrtcGetPTX, (P p, char* ptx), (p, ptx))
DECL(int, nvrtcGetCUBINSize, (P p, size_t* s), (p, s))
DECL(int, nvrtcGetCUBIN, (P p, char* c), (p, c))
DECL(int, nvrtcVersion, (int* major, int* minor), (major, minor))
DECL(int, nvrtcDestroyProgram, (P* p), (p))

DECL(int, nvmlInit_v2, (void), ())
DECL(int, nvmlDeviceGetHandleByPciBusId_v2, (const char* bus, P* d), (bus, d))
DECL(int, nvmlDeviceGetClockInfo, (P d, int kind, unsigned int* mhz), (d, kind, mhz))
DECL(int, nvmlDeviceGetCurrentClocksThrottleReasons, (P d, unsigned long long* r), (d, r))
DECL(int, nvmlSystemGetDriverVersion, (char* buf, unsigned int n), (buf, n))
DECL(int, nvmlDeviceGetPowerUsage, (P d, unsigned int* mw), (d, mw))
DECL(int, nvmlDeviceGetUtilizationRates, (P d, unsigned int* u), (d, u))

typedef struct { const char* name; void** ptr; } sym_t;
#define SYM(name) { #name, (void**)&p_##name }

static sym_t cudnn_syms[] = {
	SYM(cudnnGetVersion), SYM(cudnnGetCudartVersion), SYM(cudnnCreate), SYM(cudnnGetErrorString),
	SYM(cudnnCreateTensorDescriptor), SYM(cudnnSetTensor4dDescriptor), SYM(cudnnDestroyTensorDescriptor),
	SYM(cudnnCreateFilterDescriptor), SYM(cudnnSetFilter4dDescriptor), SYM(cudnnDestroyFilterDescriptor),
	SYM(cudnnCreateConvolutionDescriptor), SYM(cudnnSetConvolution2dDescriptor), SYM(cudnnSetConvolutionGroupCount),
	SYM(cudnnSetConvolutionMathType), SYM(cudnnDestroyConvolutionDescriptor),
	SYM(cudnnGetConvolutionForwardAlgorithm_v7), SYM(cudnnGetConvolutionBackwardDataAlgorithm_v7),
	SYM(cudnnGetConvolutionBackwardFilterAlgorithm_v7), SYM(cudnnFindConvolutionForwardAlgorithmEx),
	SYM(cudnnFindConvolutionBackwardDataAlgorithmEx), SYM(cudnnFindConvolutionBackwardFilterAlgorithmEx),
	SYM(cudnnGetConvolutionForwardWorkspaceSize), SYM(cudnnGetConvolutionBackwardDataWorkspaceSize),
	SYM(cudnnGetConvolutionBackwardFilterWorkspaceSize), SYM(cudnnConvolutionForward),
	SYM(cudnnConvolutionBackwardData), SYM(cudnnConvolutionBackwardFilter), SYM(cudnnConvolutionBackwardBias),
	SYM(cudnnAddTensor), SYM(cudnnBatchNormalizationForwardTraining), SYM(cudnnBatchNormalizationBackward),
};
static sym_t cublas_syms[] = { SYM(cublasCreate_v2), SYM(cublasSetMathMode), SYM(cublasGetVersion_v2), SYM(cublasGemmEx) };
static sym_t cublaslt_syms[] = {
	SYM(cublasLtCreate), SYM(cublasLtMatmulDescCreate), SYM(cublasLtMatmulDescSetAttribute), SYM(cublasLtMatmulDescDestroy),
	SYM(cublasLtMatrixLayoutCreate), SYM(cublasLtMatrixLayoutDestroy), SYM(cublasLtMatmulPreferenceCreate),
	SYM(cublasLtMatmulPreferenceSetAttribute), SYM(cublasLtMatmulPreferenceDestroy), SYM(cublasLtMatmulAlgoGetHeuristic),
	SYM(cublasLtMatmul),
};
static sym_t nvrtc_syms[] = {
	SYM(nvrtcCreateProgram), SYM(nvrtcCompileProgram), SYM(nvrtcGetProgramLogSize), SYM(nvrtcGetProgramLog),
	SYM(nvrtcGetPTXSize), SYM(nvrtcGetPTX), SYM(nvrtcGetCUBINSize), SYM(nvrtcGetCUBIN), SYM(nvrtcVersion),
	SYM(nvrtcDestroyProgram),
};
static sym_t nvml_syms[] = {
	SYM(nvmlInit_v2), SYM(nvmlDeviceGetHandleByPciBusId_v2), SYM(nvmlDeviceGetClockInfo),
	SYM(nvmlDeviceGetCurrentClocksThrottleReasons), SYM(nvmlSystemGetDriverVersion), SYM(nvmlDeviceGetPowerUsage),
	SYM(nvmlDeviceGetUtilizationRates),
};

// load opens a library and resolves its symbols; it returns NULL or what went wrong
// (missing is the first symbol not found). lib, when not NULL, gets the library's handle.
static const char* load(const char* path, sym_t* syms, int n, const char** missing, void** lib) {
	void* h = dlopen(path, RTLD_NOW | RTLD_GLOBAL);
	if (!h) return dlerror();
	for (int i = 0; i < n; i++) {
		*syms[i].ptr = dlsym(h, syms[i].name);
		if (!*syms[i].ptr) { *missing = syms[i].name; return "missing symbol"; }
	}
	if (lib) *lib = h;
	return NULL;
}

// cudnn_lib is the cuDNN loaded: its graph (v8 backend) API is resolved from it apart
// (cudnnv8.c), so that a cuDNN without it still serves the legacy API.
static void* cudnn_lib;
void* cudnn_library(void) { return cudnn_lib; }

const char* load_cudnn(const char* p, const char** m) { return load(p, cudnn_syms, sizeof cudnn_syms / sizeof cudnn_syms[0], m, &cudnn_lib); }
const char* load_cublas(const char* p, const char** m) { return load(p, cublas_syms, sizeof cublas_syms / sizeof cublas_syms[0], m, NULL); }
const char* load_cublaslt(const char* p, const char** m) { return load(p, cublaslt_syms, sizeof cublaslt_syms / sizeof cublaslt_syms[0], m, NULL); }
const char* load_nvrtc(const char* p, const char** m) { return load(p, nvrtc_syms, sizeof nvrtc_syms / sizeof nvrtc_syms[0], m, NULL); }
static void* nvml_lib;
const char* load_nvml(const char* p, const char** m) { return load(p, nvml_syms, sizeof nvml_syms / sizeof nvml_syms[0], m, &nvml_lib); }

// nvml_processes counts the compute processes on device d (a count-only query: NVML
// answers NVML_ERROR_INSUFFICIENT_SIZE, 7, with the count), or -1 when it cannot say.
int nvml_processes(void* d) {
	static int (*f)(void*, unsigned int*, void*);
	if (!f && nvml_lib) {
		const char* names[] = {"nvmlDeviceGetComputeRunningProcesses_v3", "nvmlDeviceGetComputeRunningProcesses_v2", "nvmlDeviceGetComputeRunningProcesses"};
		for (int i = 0; i < 3 && !f; i++) f = (int (*)(void*, unsigned int*, void*))dlsym(nvml_lib, names[i]);
	}
	if (!f) return -1;
	unsigned int n = 0;
	int s = f(d, &n, NULL);
	return s == 0 || s == 7 ? (int)n : -1;
}

// preload opens a library globally so that a later dlopen of its soname finds it (cuDNN
// opens its sub-libraries by name); it returns NULL or dlerror's text.
const char* preload(const char* p) { return dlopen(p, RTLD_NOW | RTLD_GLOBAL) ? NULL : dlerror(); }

// lt_set_int and lt_set_ptr set a cuBLASLt matmul attribute of 32 bits (a transpose, the
// epilogue) or a device address (the bias); lt_pref_workspace the workspace cap, 64 bits.
int lt_set_int(void* d, int attr, int v) { return p_cublasLtMatmulDescSetAttribute(d, attr, &v, sizeof v); }
int lt_set_ptr(void* d, int attr, unsigned long long p) { void* v = (void*)p; return p_cublasLtMatmulDescSetAttribute(d, attr, &v, sizeof v); }
int lt_pref_workspace(void* p, unsigned long long bytes) { unsigned long long v = bytes; return p_cublasLtMatmulPreferenceSetAttribute(p, 1 /* MAX_WORKSPACE_BYTES */, &v, sizeof v); }

// dptr turns a CUDA device address into the pointer the libraries take.
void* dptr(unsigned long long p) { return (void*)p; }
