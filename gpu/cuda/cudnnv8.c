//go:build cuda

// cuDNN's graph API (the "v8" backend API PyTorch 2 chooses convolution engines through)
// for one convolution phase: the operation graph, the engine heuristics' ranked
// configurations (mode INSTANT, as PyTorch, then the fallback list), each one's plan,
// engine index, numerical notes and knobs, and the plan's execution. Enumeration values
// are cudnn_graph.h's (cudnn_backend.h in cuDNN 8), stable since 8.0.
#include <dlfcn.h>
#include <stdint.h>
#include <string.h>
#include "libs.h"

enum { T_HANDLE = 0, T_DATA_TYPE = 1, T_INT64 = 3, T_FLOAT = 4, T_VOID_PTR = 6, T_CONV_MODE = 7, T_HEUR_MODE = 8,
	T_KNOB_TYPE = 9, T_NUMERICAL_NOTE = 11, T_BACKEND_DESCRIPTOR = 15 };
enum { D_CONVOLUTION = 1, D_ENGINE = 2, D_ENGINECFG = 3, D_ENGINEHEUR = 4, D_EXECUTION_PLAN = 5, D_KNOB_CHOICE = 7,
	D_OP_CONV_FWD = 10, D_OP_CONV_BWD_FILTER = 11, D_OP_CONV_BWD_DATA = 12, D_OPERATIONGRAPH = 15, D_VARIANT_PACK = 16,
	D_TENSOR = 17 };
enum {
	A_CONV_COMP_TYPE = 100, A_CONV_MODE = 101, A_CONV_DILATIONS = 102, A_CONV_FILTER_STRIDES = 103,
	A_CONV_POST_PADDINGS = 104, A_CONV_PRE_PADDINGS = 105, A_CONV_SPATIAL_DIMS = 106,
	A_ENGINEHEUR_MODE = 200, A_ENGINEHEUR_OPERATION_GRAPH = 201, A_ENGINEHEUR_RESULTS = 202,
	A_ENGINECFG_ENGINE = 300, A_ENGINECFG_KNOB_CHOICES = 302,
	A_PLAN_HANDLE = 400, A_PLAN_ENGINE_CONFIG = 401, A_PLAN_WORKSPACE_SIZE = 402,
	A_KNOB_CHOICE_KNOB_TYPE = 600, A_KNOB_CHOICE_KNOB_VALUE = 601,
	A_FWD_ALPHA = 700, A_FWD_BETA = 701, A_FWD_CONV_DESC = 702, A_FWD_W = 703, A_FWD_X = 704, A_FWD_Y = 705,
	A_BWD_DATA_ALPHA = 706, A_BWD_DATA_BETA = 707, A_BWD_DATA_CONV_DESC = 708, A_BWD_DATA_W = 709, A_BWD_DATA_DX = 710, A_BWD_DATA_DY = 711,
	A_BWD_FILTER_ALPHA = 712, A_BWD_FILTER_BETA = 713, A_BWD_FILTER_CONV_DESC = 714, A_BWD_FILTER_DW = 715, A_BWD_FILTER_X = 716, A_BWD_FILTER_DY = 717,
	A_OPERATIONGRAPH_HANDLE = 800, A_OPERATIONGRAPH_OPS = 801,
	A_TENSOR_BYTE_ALIGNMENT = 900, A_TENSOR_DATA_TYPE = 901, A_TENSOR_DIMENSIONS = 902, A_TENSOR_STRIDES = 903, A_TENSOR_UNIQUE_ID = 906,
	A_VARIANT_PACK_UNIQUE_IDS = 1000, A_VARIANT_PACK_DATA_POINTERS = 1001, A_VARIANT_PACK_WORKSPACE = 1003,
	A_ENGINE_GLOBAL_INDEX = 1301, A_ENGINE_NUMERICAL_NOTE = 1303,
};
enum { HEUR_MODE_INSTANT = 0, HEUR_MODE_FALLBACK = 2, CROSS_CORRELATION = 1 };

static int (*p_create)(int, void**);
static int (*p_destroy)(void*);
static int (*p_finalize)(void*);
static int (*p_set)(void*, int, int, int64_t, const void*);
static int (*p_get)(void*, int, int, int64_t, int64_t*, void*);
static int (*p_execute)(void*, void*, void*);

const char* v8_load(const char** missing) {
	void* lib = cudnn_library();
	struct { const char* name; void** ptr; } syms[] = {
		{"cudnnBackendCreateDescriptor", (void**)&p_create}, {"cudnnBackendDestroyDescriptor", (void**)&p_destroy},
		{"cudnnBackendFinalize", (void**)&p_finalize}, {"cudnnBackendSetAttribute", (void**)&p_set},
		{"cudnnBackendGetAttribute", (void**)&p_get}, {"cudnnBackendExecute", (void**)&p_execute},
	};
	if (!lib) return "cuDNN is not loaded";
	for (size_t i = 0; i < sizeof syms / sizeof syms[0]; i++) {
		*syms[i].ptr = dlsym(lib, syms[i].name);
		if (!*syms[i].ptr) { *missing = syms[i].name; return "missing symbol"; }
	}
	return NULL;
}

void v8_destroy(void* d) { if (d) p_destroy(d); }

// CHECK returns the first failing status, naming the step in *where.
#define CHECK(step, call) do { int s_ = (call); if (s_ != 0) { *where = step; return s_; } } while (0)

// tensor makes a finalized tensor descriptor of dimensions d (N, C, H, W) and strides s:
// packed NCHW, or channels_last (NHWC) as PyTorch's.
static int tensor(int64_t uid, int dtype, const long long d[4], const long long s[4], void** out, const char** where) {
	int64_t dims[4] = {d[0], d[1], d[2], d[3]};
	int64_t strides[4] = {s[0], s[1], s[2], s[3]};
	int64_t align = 16;
	CHECK("create a tensor", p_create(D_TENSOR, out));
	CHECK("tensor data type", p_set(*out, A_TENSOR_DATA_TYPE, T_DATA_TYPE, 1, &dtype));
	CHECK("tensor dimensions", p_set(*out, A_TENSOR_DIMENSIONS, T_INT64, 4, dims));
	CHECK("tensor strides", p_set(*out, A_TENSOR_STRIDES, T_INT64, 4, strides));
	CHECK("tensor id", p_set(*out, A_TENSOR_UNIQUE_ID, T_INT64, 1, &uid));
	CHECK("tensor alignment", p_set(*out, A_TENSOR_BYTE_ALIGNMENT, T_INT64, 1, &align));
	CHECK("finalize a tensor", p_finalize(*out));
	return 0;
}

// graph builds the operation graph of one convolution phase: its tensors are x (uid 1),
// w (uid 2) and y (uid 3), or their gradients for the backward phases.
static int graph(void* handle, const v8_conv_t* c, void** out, const char** where) {
	void *x = NULL, *w = NULL, *y = NULL, *conv = NULL, *op = NULL;
	int s;
	if ((s = tensor(1, c->dtype, c->x, c->xs, &x, where)) || (s = tensor(2, c->dtype, c->w, c->ws, &w, where)) || (s = tensor(3, c->dtype, c->y, c->ys, &y, where))) goto done;
	int64_t dims = 2, pad[2] = {c->pad[0], c->pad[1]}, stride[2] = {c->stride[0], c->stride[1]}, dil[2] = {c->dilation[0], c->dilation[1]};
	int mode = CROSS_CORRELATION, ctype = c->ctype;
	if ((s = p_create(D_CONVOLUTION, &conv))) { *where = "create the convolution"; goto done; }
	if ((s = p_set(conv, A_CONV_COMP_TYPE, T_DATA_TYPE, 1, &ctype)) || (s = p_set(conv, A_CONV_MODE, T_CONV_MODE, 1, &mode)) ||
		(s = p_set(conv, A_CONV_SPATIAL_DIMS, T_INT64, 1, &dims)) || (s = p_set(conv, A_CONV_DILATIONS, T_INT64, 2, dil)) ||
		(s = p_set(conv, A_CONV_FILTER_STRIDES, T_INT64, 2, stride)) || (s = p_set(conv, A_CONV_PRE_PADDINGS, T_INT64, 2, pad)) ||
		(s = p_set(conv, A_CONV_POST_PADDINGS, T_INT64, 2, pad)) || (s = p_finalize(conv))) {
		*where = "the convolution descriptor";
		goto done;
	}
	float alpha = 1, beta = 0;
	static const int kinds[3] = {D_OP_CONV_FWD, D_OP_CONV_BWD_DATA, D_OP_CONV_BWD_FILTER};
	// Per phase: the attributes of alpha, beta, the convolution, and x, w, y as that
	// operation names them.
	static const int attrs[3][6] = {
		{A_FWD_ALPHA, A_FWD_BETA, A_FWD_CONV_DESC, A_FWD_X, A_FWD_W, A_FWD_Y},
		{A_BWD_DATA_ALPHA, A_BWD_DATA_BETA, A_BWD_DATA_CONV_DESC, A_BWD_DATA_DX, A_BWD_DATA_W, A_BWD_DATA_DY},
		{A_BWD_FILTER_ALPHA, A_BWD_FILTER_BETA, A_BWD_FILTER_CONV_DESC, A_BWD_FILTER_X, A_BWD_FILTER_DW, A_BWD_FILTER_DY},
	};
	const int* a = attrs[c->phase];
	if ((s = p_create(kinds[c->phase], &op))) { *where = "create the operation"; goto done; }
	if ((s = p_set(op, a[0], T_FLOAT, 1, &alpha)) || (s = p_set(op, a[1], T_FLOAT, 1, &beta)) ||
		(s = p_set(op, a[2], T_BACKEND_DESCRIPTOR, 1, &conv)) || (s = p_set(op, a[3], T_BACKEND_DESCRIPTOR, 1, &x)) ||
		(s = p_set(op, a[4], T_BACKEND_DESCRIPTOR, 1, &w)) || (s = p_set(op, a[5], T_BACKEND_DESCRIPTOR, 1, &y)) ||
		(s = p_finalize(op))) {
		*where = "the operation";
		goto done;
	}
	if ((s = p_create(D_OPERATIONGRAPH, out))) { *where = "create the graph"; goto done; }
	if ((s = p_set(*out, A_OPERATIONGRAPH_OPS, T_BACKEND_DESCRIPTOR, 1, &op)) ||
		(s = p_set(*out, A_OPERATIONGRAPH_HANDLE, T_HANDLE, 1, &handle)) || (s = p_finalize(*out))) {
		*where = "the operation graph";
	}
done:
	v8_destroy(op);
	v8_destroy(conv);
	v8_destroy(x);
	v8_destroy(w);
	v8_destroy(y);
	return s;
}

// describe fills a candidate from its engine configuration and builds its plan.
static void describe(void* handle, void* cfg, v8_cand_t* c) {
	memset(c, 0, sizeof *c);
	c->cfg = cfg;
	void* engine = NULL;
	int64_t n = 0;
	if (p_create(D_ENGINE, &engine) == 0 && p_get(cfg, A_ENGINECFG_ENGINE, T_BACKEND_DESCRIPTOR, 1, &n, &engine) == 0) {
		int64_t idx = -1;
		p_get(engine, A_ENGINE_GLOBAL_INDEX, T_INT64, 1, &n, &idx);
		c->engine = idx;
		int notes[16];
		if (p_get(engine, A_ENGINE_NUMERICAL_NOTE, T_NUMERICAL_NOTE, 16, &n, notes) == 0) {
			c->nnotes = (int)(n < 16 ? n : 16);
			memcpy(c->notes, notes, sizeof(int) * (size_t)c->nnotes);
		}
	}
	v8_destroy(engine);
	void* knobs[16] = {0};
	int made = 0;
	for (; made < 16 && p_create(D_KNOB_CHOICE, &knobs[made]) == 0; made++) {
	}
	if (p_get(cfg, A_ENGINECFG_KNOB_CHOICES, T_BACKEND_DESCRIPTOR, made, &n, knobs) == 0) {
		c->nknobs = (int)(n < made ? n : made);
		for (int i = 0; i < c->nknobs; i++) {
			int type = 0;
			int64_t value = 0, got = 0;
			p_get(knobs[i], A_KNOB_CHOICE_KNOB_TYPE, T_KNOB_TYPE, 1, &got, &type);
			p_get(knobs[i], A_KNOB_CHOICE_KNOB_VALUE, T_INT64, 1, &got, &value);
			c->knob_type[i] = type;
			c->knob_value[i] = value;
		}
	}
	for (int i = 0; i < made; i++) v8_destroy(knobs[i]);
	void* plan = NULL;
	c->status = p_create(D_EXECUTION_PLAN, &plan);
	if (c->status == 0) c->status = p_set(plan, A_PLAN_HANDLE, T_HANDLE, 1, &handle);
	if (c->status == 0) c->status = p_set(plan, A_PLAN_ENGINE_CONFIG, T_BACKEND_DESCRIPTOR, 1, &cfg);
	if (c->status == 0) c->status = p_finalize(plan);
	if (c->status == 0) {
		int64_t ws = 0;
		p_get(plan, A_PLAN_WORKSPACE_SIZE, T_INT64, 1, &n, &ws);
		c->workspace = ws;
		c->plan = plan;
	} else {
		v8_destroy(plan);
	}
}

// heuristics appends the engine configurations of one heuristics mode.
static int heuristics(void* handle, void* g, int mode, v8_cand_t* out, int max, int* n, const char** where) {
	void* heur = NULL;
	int s;
	if ((s = p_create(D_ENGINEHEUR, &heur))) { *where = "create the heuristics"; return s; }
	if ((s = p_set(heur, A_ENGINEHEUR_OPERATION_GRAPH, T_BACKEND_DESCRIPTOR, 1, &g)) ||
		(s = p_set(heur, A_ENGINEHEUR_MODE, T_HEUR_MODE, 1, &mode)) || (s = p_finalize(heur))) {
		*where = "the heuristics";
		v8_destroy(heur);
		return s;
	}
	int64_t count = 0;
	if ((s = p_get(heur, A_ENGINEHEUR_RESULTS, T_BACKEND_DESCRIPTOR, 0, &count, NULL))) {
		*where = "the heuristics' results";
		v8_destroy(heur);
		return s;
	}
	int room = max - *n;
	if (count > room) count = room;
	void* cfgs[64];
	if (count > 64) count = 64;
	int made = 0;
	for (; made < count && p_create(D_ENGINECFG, &cfgs[made]) == 0; made++) {
	}
	int64_t got = 0;
	if (made > 0 && (s = p_get(heur, A_ENGINEHEUR_RESULTS, T_BACKEND_DESCRIPTOR, made, &got, cfgs)) == 0) {
		for (int i = 0; i < made; i++) {
			if (i < got) describe(handle, cfgs[i], &out[(*n)++]);
			else v8_destroy(cfgs[i]);
		}
	} else {
		for (int i = 0; i < made; i++) v8_destroy(cfgs[i]);
		if (s) *where = "the heuristics' results";
	}
	v8_destroy(heur);
	return s;
}

int v8_conv_candidates(void* handle, const v8_conv_t* c, v8_cand_t* out, int max, int* n, const char** where) {
	void* g = NULL;
	*n = 0;
	int s = graph(handle, c, &g, where);
	if (s) return s;
	s = heuristics(handle, g, HEUR_MODE_INSTANT, out, max, n, where);
	if (s == 0) heuristics(handle, g, HEUR_MODE_FALLBACK, out, max, n, where); // what PyTorch tries after the heuristics' list
	v8_destroy(g);
	return *n > 0 ? 0 : s;
}

int v8_execute(void* handle, void* plan, unsigned long long a, unsigned long long b, unsigned long long c, unsigned long long ws) {
	void* vp = NULL;
	int s = p_create(D_VARIANT_PACK, &vp);
	if (s) return s;
	int64_t uids[3] = {1, 2, 3};
	void* ptrs[3] = {(void*)a, (void*)b, (void*)c};
	void* work = (void*)ws;
	if (!(s = p_set(vp, A_VARIANT_PACK_UNIQUE_IDS, T_INT64, 3, uids)) && !(s = p_set(vp, A_VARIANT_PACK_DATA_POINTERS, T_VOID_PTR, 3, ptrs)) &&
		!(s = p_set(vp, A_VARIANT_PACK_WORKSPACE, T_VOID_PTR, 1, &work)) && !(s = p_finalize(vp))) {
		s = p_execute(handle, plan, vp);
	}
	v8_destroy(vp);
	return s;
}
