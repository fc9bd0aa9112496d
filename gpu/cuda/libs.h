//go:build cuda

// Declarations of libs.c: run-time loading of cuDNN, cuBLAS, NVRTC and NVML.
#ifndef CNNTIME_LIBS_H
#define CNNTIME_LIBS_H
#include <stddef.h>
#include <stdlib.h>

// The layout of cudnnConvolution{Fwd,BwdData,BwdFilter}AlgoPerf_t in cuDNN 7, 8 and 9.
typedef struct { int algo; int status; float time; size_t memory; int determinism; int mathType; int reserved[3]; } perf_t;

// cublasLtMatmulHeuristicResult_t (cuBLASLt 11, 12 and 13): the algorithm is 64 opaque bytes.
typedef struct { unsigned long long algo[8]; size_t workspaceSize; int state; float wavesCount; int reserved[4]; } lt_heuristic_t;

size_t x_cudnnGetVersion(void);
size_t x_cudnnGetCudartVersion(void);
int x_cudnnCreate(void** h);
const char* x_cudnnGetErrorString(int s);
int x_cudnnCreateTensorDescriptor(void** d);
int x_cudnnSetTensor4dDescriptor(void* d, int f, int t, int n, int c, int h, int w);
int x_cudnnDestroyTensorDescriptor(void* d);
int x_cudnnCreateFilterDescriptor(void** d);
int x_cudnnSetFilter4dDescriptor(void* d, int t, int f, int k, int c, int h, int w);
int x_cudnnDestroyFilterDescriptor(void* d);
int x_cudnnCreateConvolutionDescriptor(void** d);
int x_cudnnSetConvolution2dDescriptor(void* d, int ph, int pw, int sh, int sw, int dh, int dw, int mode, int t);
int x_cudnnSetConvolutionGroupCount(void* d, int g);
int x_cudnnSetConvolutionMathType(void* d, int m);
int x_cudnnDestroyConvolutionDescriptor(void* d);
int x_cudnnGetConvolutionForwardAlgorithm_v7(void* h, void* a, void* b, void* c, void* d, int n, int* got, perf_t* r);
int x_cudnnGetConvolutionBackwardDataAlgorithm_v7(void* h, void* a, void* b, void* c, void* d, int n, int* got, perf_t* r);
int x_cudnnGetConvolutionBackwardFilterAlgorithm_v7(void* h, void* a, void* b, void* c, void* d, int n, int* got, perf_t* r);
// The Ex searches time the algorithms on the caller's buffers and workspace (the non-Ex
// ones allocate their own copies, so they report out of memory at half the real limit).
int x_cudnnFindConvolutionForwardAlgorithmEx(void* h, void* xd, const void* x, void* wd, const void* w, void* cd, void* yd, void* y, int n, int* got, perf_t* r, void* ws, size_t wss);
int x_cudnnFindConvolutionBackwardDataAlgorithmEx(void* h, void* wd, const void* w, void* dyd, const void* dy, void* cd, void* dxd, void* dx, int n, int* got, perf_t* r, void* ws, size_t wss);
int x_cudnnFindConvolutionBackwardFilterAlgorithmEx(void* h, void* xd, const void* x, void* dyd, const void* dy, void* cd, void* dwd, void* dw, int n, int* got, perf_t* r, void* ws, size_t wss);
int x_cudnnGetConvolutionForwardWorkspaceSize(void* h, void* a, void* b, void* c, void* d, int algo, size_t* s);
int x_cudnnGetConvolutionBackwardDataWorkspaceSize(void* h, void* a, void* b, void* c, void* d, int algo, size_t* s);
int x_cudnnGetConvolutionBackwardFilterWorkspaceSize(void* h, void* a, void* b, void* c, void* d, int algo, size_t* s);
int x_cudnnConvolutionForward(void* h, const void* al, void* xd, const void* x, void* wd, const void* w, void* cd, int algo, void* ws, size_t wss, const void* be, void* yd, void* y);
int x_cudnnConvolutionBackwardData(void* h, const void* al, void* wd, const void* w, void* dyd, const void* dy, void* cd, int algo, void* ws, size_t wss, const void* be, void* dxd, void* dx);
int x_cudnnConvolutionBackwardFilter(void* h, const void* al, void* xd, const void* x, void* dyd, const void* dy, void* cd, int algo, void* ws, size_t wss, const void* be, void* dwd, void* dw);
int x_cudnnConvolutionBackwardBias(void* h, const void* al, void* dyd, const void* dy, const void* be, void* dbd, void* db);
int x_cudnnAddTensor(void* h, const void* al, void* bd, const void* b, const void* be, void* yd, void* y);
int x_cudnnBatchNormalizationForwardTraining(void* h, int mode, const void* al, const void* be, void* xd, const void* x, void* yd, void* y, void* sd, const void* scale, const void* bias, double f, void* rm, void* rv, double eps, void* sm, void* sv);
int x_cudnnBatchNormalizationBackward(void* h, int mode, const void* ad, const void* bd, const void* ap, const void* bp, void* xd, const void* x, void* dyd, const void* dy, void* dxd, void* dx, void* sd, const void* scale, void* dscale, void* dbias, double eps, const void* sm, const void* sv);
int x_cublasCreate_v2(void** h);
int x_cublasSetMathMode(void* h, int m);
int x_cublasGetVersion_v2(void* h, int* v);
int x_cublasGemmEx(void* h, int ta, int tb, int m, int n, int k, const void* al, const void* a, int at, int lda, const void* b, int bt, int ldb, const void* be, void* c, int ct, int ldc, int comp, int algo);
int x_cublasLtCreate(void** h);
int x_cublasLtMatmulDescCreate(void** d, int compute, int scale);
int x_cublasLtMatmulDescSetAttribute(void* d, int attr, const void* buf, size_t n);
int x_cublasLtMatmulDescDestroy(void* d);
int x_cublasLtMatrixLayoutCreate(void** l, int type, unsigned long long rows, unsigned long long cols, long long ld);
int x_cublasLtMatrixLayoutDestroy(void* l);
int x_cublasLtMatmulPreferenceCreate(void** p);
int x_cublasLtMatmulPreferenceSetAttribute(void* p, int attr, const void* buf, size_t n);
int x_cublasLtMatmulPreferenceDestroy(void* p);
int x_cublasLtMatmulAlgoGetHeuristic(void* h, void* op, void* a, void* b, void* c, void* d, void* pref, int n, lt_heuristic_t* r, int* got);
int x_cublasLtMatmul(void* h, void* op, const void* al, const void* a, void* ad, const void* b, void* bd, const void* be, const void* c, void* cd, void* d, void* dd, const void* algo, void* ws, size_t wss, void* stream);
int x_nvrtcCreateProgram(void** p, const char* src, const char* name, int n, const char* const* hs, const char* const* ns);
int x_nvrtcCompileProgram(void* p, int n, const char* const* opts);
int x_nvrtcGetProgramLogSize(void* p, size_t* s);
int x_nvrtcGetProgramLog(void* p, char* log);
int x_nvrtcGetPTXSize(void* p, size_t* s);
int x_nvrtcGetPTX(void* p, char* ptx);
int x_nvrtcGetCUBINSize(void* p, size_t* s);
int x_nvrtcGetCUBIN(void* p, char* cubin);
int x_nvrtcVersion(int* major, int* minor);
int x_nvrtcDestroyProgram(void** p);
int x_nvmlInit_v2(void);
int x_nvmlDeviceGetHandleByPciBusId_v2(const char* bus, void** d);
int x_nvmlDeviceGetClockInfo(void* d, int kind, unsigned int* mhz);
int x_nvmlDeviceGetCurrentClocksThrottleReasons(void* d, unsigned long long* r);
int x_nvmlSystemGetDriverVersion(char* buf, unsigned int n);
int x_nvmlDeviceGetPowerUsage(void* d, unsigned int* mw);
int x_nvmlDeviceGetUtilizationRates(void* d, unsigned int* u);
int nvml_processes(void* d);

const char* load_cudnn(const char* p, const char** m);
const char* load_cublas(const char* p, const char** m);
const char* load_cublaslt(const char* p, const char** m);
const char* load_nvrtc(const char* p, const char** m);
const char* load_nvml(const char* p, const char** m);
int lt_set_int(void* d, int attr, int v);
int lt_set_ptr(void* d, int attr, unsigned long long p);
int lt_pref_workspace(void* p, unsigned long long bytes);
void* dptr(unsigned long long p);
void* cudnn_library(void);

// cuDNN's graph (v8 backend) API for convolutions (cudnnv8.c).
typedef struct {
	int phase;      // 0 forward, 1 data gradient, 2 weight gradient
	int dtype;      // cudnnDataType_t of the tensors
	int ctype;      // of the arithmetic
	long long x[4], w[4], y[4];
	long long xs[4], ws[4], ys[4]; // their strides: packed NCHW, or channels_last
	long long pad[2], stride[2], dilation[2];
} v8_conv_t;
typedef struct {
	void* cfg;          // the engine configuration
	void* plan;         // its execution plan, or NULL when it did not finalize
	int status;         // the plan's finalize status
	long long engine;   // the engine's global index
	long long workspace;
	int nnotes;
	int notes[16];
	int nknobs;
	long long knob_type[16], knob_value[16];
} v8_cand_t;
const char* v8_load(const char** missing);
int v8_conv_candidates(void* handle, const v8_conv_t* c, v8_cand_t* out, int max, int* n, const char** where);
int v8_execute(void* handle, void* plan, unsigned long long a, unsigned long long b, unsigned long long c, unsigned long long ws);
void v8_destroy(void* d);
const char* preload(const char* p);
#endif
