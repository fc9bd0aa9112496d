// Runs kernels.cu's kernels on the CPU for the tests of package gpu/cudakern.
//
// Standard input, little-endian int64 words: the buffer count, then per buffer its size
// in bytes and its bytes (padded to 8); the launch count, then per launch the kernel's
// name (its length, then the name padded to 8), grid, block, the argument count and the
// arguments, two 8-byte words each: its kind (1: a buffer, whose index follows; 0: a
// value) and the word. Standard output: every buffer's bytes after the launches, in
// order.
#include "host_cuda.h"
#include KERNELS
#include <cstdio>
#include <map>
#include <string>
#include <type_traits>
#include <utility>

template <class A> A word_as(uint64_t w) {
	if constexpr (std::is_pointer_v<A>) return reinterpret_cast<A>(w);
	else if constexpr (std::is_floating_point_v<A>) { double d; std::memcpy(&d, &w, 8); return (A)d; }
	else return (A)(int64_t)w;
}

template <class... A, size_t... I> void call(void (*f)(A...), const uint64_t* w, std::index_sequence<I...>) { f(word_as<A>(w[I])...); }

template <class... A> std::function<void(const std::vector<uint64_t>&)> kernel(void (*f)(A...)) {
	return [f](const std::vector<uint64_t>& w) {
		if (w.size() != sizeof...(A)) { fprintf(stderr, "wrong argument count %zu, want %zu\n", w.size(), sizeof...(A)); exit(2); }
		call(f, w.data(), std::index_sequence_for<A...>{});
	};
}

#define K(name) {#name, kernel(name)}
static std::map<std::string, std::function<void(const std::vector<uint64_t>&)>> kernels = {
	K(act_fwd), K(act_bwd), K(act_fwd_v), K(act_bwd_v), K(add_v), K(plane_stats), K(bn_finalize), K(bn_apply), K(binary), K(plane_dot), K(plane_mean), K(column_sum), K(drop), K(copy_runs),
	K(transpose), K(pool_fwd), K(pool_bwd), K(rownorm_fwd), K(rownorm_bwd), K(rownorm_wgrad), K(xent_fwd), K(xent_bwd), K(touch), K(spin),
};

static int64_t word() {
	int64_t w;
	if (fread(&w, 8, 1, stdin) != 1) { fprintf(stderr, "short input\n"); exit(2); }
	return w;
}

int main() {
	std::vector<std::vector<char>> bufs(word());
	for (auto& b : bufs) {
		int64_t n = word();
		b.resize((n + 7) / 8 * 8);
		if (n > 0 && fread(b.data(), 1, b.size(), stdin) != b.size()) { fprintf(stderr, "short buffer\n"); return 2; }
		b.resize(n);
	}
	for (int64_t l = word(); l > 0; l--) {
		int64_t len = word();
		std::string name((len + 7) / 8 * 8, '\0');
		if (fread(name.data(), 1, name.size(), stdin) != name.size()) return 2;
		name.resize(len);
		long grid = word(), block = word();
		std::vector<uint64_t> args(word());
		for (auto& a : args) {
			int64_t kind = word();
			a = (uint64_t)word();
			if (kind == 1) {
				if (a >= bufs.size()) { fprintf(stderr, "no buffer %llu\n", (unsigned long long)a); return 2; }
				a = (uint64_t)bufs[a].data();
			}
		}
		auto k = kernels.find(name);
		if (k == kernels.end()) { fprintf(stderr, "no kernel %s\n", name.c_str()); return 2; }
		gridDim = {grid, 1, 1};
		blockDim = {block, 1, 1};
		for (long b = 0; b < grid; b++) host_run_block(b, [&] { k->second(args); });
	}
	for (auto& b : bufs) fwrite(b.data(), 1, b.size(), stdout);
	return 0;
}
