/*
 * run_model: kiln's C API from end to end (docs/capi.md). Loads a model, prints its inputs and
 * outputs, runs it on raw input files or seeded random inputs, and prints each output's stats.
 *
 *   run_model MODEL [--info] [--dim NAME=VALUE]... [--input FILE [--shape D1xD2...]]...
 *             [--outputs DIR] [--alloc] [--threads N] [-O LEVEL] [--seed N]
 *
 * --input FILE    the raw bytes of the next input (dense, row-major, its element type). Its dims
 *                 are --shape's after it, else the model's, symbolic ones from --dim (else 1).
 *                 Without --input: seeded random inputs of those dims.
 * --outputs DIR   writes DIR/output_N.raw, the raw bytes of each output.
 * --alloc         lets kiln allocate the outputs (kiln_session_run_alloc) instead of asking for
 *                 the output dims and running into buffers of its own (kiln_session_run).
 * --info          stops after printing the inputs and outputs.
 * --runs N        runs N times (after one warm-up run) and prints the median and the fastest time.
 *
 * Exit codes as kiln's command line: 0 success, 2 bad input (one line on stderr), 3 a bug in kiln.
 * Built against include/kiln/kiln.h and libkiln.so only.
 */
#include <kiln/kiln.h>

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_TENSORS 64
#define MAX_RANK 64
#define MAX_DIMS 16

struct args {
  const char* model;
  const char* inputs[MAX_TENSORS];
  const char* shapes[MAX_TENSORS]; /* "1x512", or NULL: the model's dims */
  int n_inputs;
  const char* dim_names[MAX_DIMS];
  int64_t dim_values[MAX_DIMS];
  int n_dims;
  const char* outputs_dir;
  int info_only, alloc, threads, level, runs;
  unsigned long long seed;
};

/* A failed kiln call: its status and message on one line, and the exit code it means. */
static int report(kiln_status st, const char* what) {
  fprintf(stderr, "run_model: %s: %s: %s\n", what, kiln_status_name(st), kiln_last_error());
  return st == KILN_ERROR_INTERNAL ? 3 : 2;
}

#define CHECK(call, what)                      \
  do {                                         \
    kiln_status st_ = (call);                  \
    if (st_ != KILN_OK) return report(st_, what); \
  } while (0)

static int usage(const char* msg) {
  fprintf(stderr, "run_model: %s (usage: run_model MODEL [--info] [--dim NAME=VALUE]... [--input FILE [--shape DIMS]]... "
                  "[--outputs DIR] [--alloc] [--runs N] [--threads N] [-O LEVEL] [--seed N])\n", msg);
  return 2;
}

static int parse_args(int argc, char** argv, struct args* a) {
  memset(a, 0, sizeof *a);
  a->level = 2;
  a->seed = 1;
  for (int i = 1; i < argc; ++i) {
    const char* s = argv[i];
    const char* v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!strcmp(s, "--info")) a->info_only = 1;
    else if (!strcmp(s, "--alloc")) a->alloc = 1;
    else if (!strcmp(s, "--input") && v && a->n_inputs < MAX_TENSORS) a->inputs[a->n_inputs++] = argv[++i];
    else if (!strcmp(s, "--shape") && v && a->n_inputs > 0) a->shapes[a->n_inputs - 1] = argv[++i];
    else if (!strcmp(s, "--outputs") && v) a->outputs_dir = argv[++i];
    else if (!strcmp(s, "--threads") && v) a->threads = atoi(argv[++i]);
    else if (!strcmp(s, "--runs") && v) a->runs = atoi(argv[++i]);
    else if (!strcmp(s, "-O") && v) a->level = atoi(argv[++i]);
    else if (!strcmp(s, "--seed") && v) a->seed = strtoull(argv[++i], NULL, 10);
    else if (!strcmp(s, "--dim") && v && a->n_dims < MAX_DIMS) {
      char* eq = strchr(argv[++i], '=');
      if (!eq || eq == argv[i]) return usage("--dim takes NAME=VALUE");
      *eq = '\0';
      a->dim_names[a->n_dims] = argv[i];
      a->dim_values[a->n_dims++] = strtoll(eq + 1, NULL, 10);
    } else if (s[0] != '-' && !a->model) a->model = s;
    else return usage(s[0] == '-' ? "unknown flag or missing value" : "one model only");
  }
  return a->model ? 0 : usage("no model given");
}

/* "2x1x128" -> {2, 1, 128}, "" -> a scalar; the rank, or -1 when it is not such a list. */
static int64_t parse_shape(const char* s, int64_t* dims) {
  int64_t rank = 0;
  while (*s) {
    char* end;
    errno = 0;
    const long long d = strtoll(s, &end, 10);
    if (end == s || d < 0 || errno || rank == MAX_RANK || (*end && *end != 'x')) return -1;
    dims[rank++] = d;
    s = *end ? end + 1 : end;
  }
  return rank;
}

/* "[batch,768]" from an info's dims and their names. */
static void dims_text(const kiln_tensor_info* info, char* buf, size_t cap) {
  int64_t rank, dims[MAX_RANK];
  kiln_tensor_info_rank(info, &rank);
  if (rank < 0 || rank > MAX_RANK) { snprintf(buf, cap, "[?]"); return; }
  kiln_tensor_info_dims(info, dims, MAX_RANK);
  size_t n = (size_t)snprintf(buf, cap, "[");
  for (int64_t k = 0; k < rank && n < cap; ++k) {
    const char* name;
    kiln_tensor_info_dim_name(info, (size_t)k, &name);
    if (dims[k] >= 0) n += (size_t)snprintf(buf + n, cap - n, "%s%lld", k ? "," : "", (long long)dims[k]);
    else n += (size_t)snprintf(buf + n, cap - n, "%s%s", k ? "," : "", name[0] ? name : "?");
  }
  if (n < cap) snprintf(buf + n, cap - n, "]");
}

static void print_info(const char* kind, size_t i, const kiln_tensor_info* info) {
  const char* name;
  kiln_dtype dt;
  char dims[512];
  kiln_tensor_info_name(info, &name);
  kiln_tensor_info_dtype(info, &dt);
  dims_text(info, dims, sizeof dims);
  printf("%s %zu  %-24s %s%s\n", kind, i, name, kiln_dtype_name(dt), dims);
}

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int compare_doubles(const void* x, const void* y) {
  const double a = *(const double*)x, b = *(const double*)y;
  return (a > b) - (a < b);
}

/* A seeded xorshift generator, so that runs repeat. */
static unsigned long long next_random(unsigned long long* s) {
  *s ^= *s << 13;
  *s ^= *s >> 7;
  *s ^= *s << 17;
  return *s;
}

static void fill_random(kiln_dtype dt, void* data, size_t n, unsigned long long* seed) {
  for (size_t k = 0; k < n; ++k) {
    const unsigned long long r = next_random(seed);
    const double u = (double)(r >> 11) / 9007199254740992.0; /* [0, 1) */
    switch (dt) {
      case KILN_DTYPE_FLOAT32: ((float*)data)[k] = (float)(2 * u - 1); break;
      case KILN_DTYPE_FLOAT64: ((double*)data)[k] = 2 * u - 1; break;
      case KILN_DTYPE_INT64: ((int64_t*)data)[k] = (int64_t)(r % 10); break;
      case KILN_DTYPE_INT32: ((int32_t*)data)[k] = (int32_t)(r % 10); break;
      case KILN_DTYPE_BOOL: ((uint8_t*)data)[k] = (uint8_t)(r & 1); break;
      default: memset((char*)data + k * kiln_dtype_size(dt), 0, kiln_dtype_size(dt)); break;
    }
  }
}

static int read_file(const char* path, void* data, size_t bytes) {
  FILE* f = fopen(path, "rb");
  if (!f) { fprintf(stderr, "run_model: '%s': %s\n", path, strerror(errno)); return 2; }
  size_t got = fread(data, 1, bytes, f);
  int extra = fgetc(f) != EOF;
  fclose(f);
  if (got != bytes || extra) {
    fprintf(stderr, "run_model: '%s': expected %zu bytes for its input\n", path, bytes);
    return 2;
  }
  return 0;
}

static double element(kiln_dtype dt, const void* p, size_t k) {
  switch (dt) {
    case KILN_DTYPE_FLOAT32: return ((const float*)p)[k];
    case KILN_DTYPE_FLOAT64: return ((const double*)p)[k];
    case KILN_DTYPE_INT64: return (double)((const int64_t*)p)[k];
    case KILN_DTYPE_INT32: return ((const int32_t*)p)[k];
    case KILN_DTYPE_INT8: return ((const int8_t*)p)[k];
    case KILN_DTYPE_UINT8: case KILN_DTYPE_BOOL: return ((const uint8_t*)p)[k];
    default: return NAN;
  }
}

static void print_stats(size_t i, const char* name, const kiln_tensor* t) {
  const size_t es = kiln_dtype_size(t->dtype), n = es ? t->byte_size / es : 0;
  printf("result %zu  %-24s %s[", i, name, kiln_dtype_name(t->dtype));
  for (size_t k = 0; k < t->rank; ++k) printf("%s%lld", k ? "," : "", (long long)t->dims[k]);
  printf("]");
  if (n == 0 || isnan(element(t->dtype, t->data, 0))) { printf("\n"); return; }
  double lo = INFINITY, hi = -INFINITY, sum = 0;
  for (size_t k = 0; k < n; ++k) {
    const double v = element(t->dtype, t->data, k);
    lo = v < lo ? v : lo;
    hi = v > hi ? v : hi;
    sum += v;
  }
  printf("  min %.6g  max %.6g  mean %.6g  first %.6g\n", lo, hi, sum / (double)n, element(t->dtype, t->data, 0));
}

static int write_output(const char* dir, size_t i, const kiln_tensor* t) {
  char path[4096];
  snprintf(path, sizeof path, "%s/output_%zu.raw", dir, i);
  FILE* f = fopen(path, "wb");
  if (!f || fwrite(t->data, 1, t->byte_size, f) != t->byte_size || fclose(f) != 0) {
    fprintf(stderr, "run_model: cannot write '%s': %s\n", path, strerror(errno));
    return 2;
  }
  return 0;
}

int main(int argc, char** argv) {
  struct args a;
  int rc = parse_args(argc, argv, &a);
  if (rc) return rc;

  kiln_options* opts;
  CHECK(kiln_options_create(&opts), "options");
  CHECK(kiln_options_set_threads(opts, a.threads), "--threads");
  CHECK(kiln_options_set_optimize_level(opts, a.level), "-O");
  for (int d = 0; d < a.n_dims; ++d) CHECK(kiln_options_set_dim(opts, a.dim_names[d], a.dim_values[d]), "--dim");
  kiln_session* session;
  const double t0 = now_ms();
  kiln_status st = kiln_session_create(a.model, opts, &session);
  const double created_ms = now_ms() - t0;
  kiln_options_destroy(opts);
  if (st != KILN_OK) return report(st, a.model);
  if (a.runs > 0) printf("session created in %.1f ms\n", created_ms);

  size_t n_in, n_out;
  CHECK(kiln_session_input_count(session, &n_in), "inputs");
  CHECK(kiln_session_output_count(session, &n_out), "outputs");
  if (n_in > MAX_TENSORS || n_out > MAX_TENSORS) return usage("more than 64 inputs or outputs");
  const kiln_tensor_info* info;
  for (size_t i = 0; i < n_in; ++i) {
    CHECK(kiln_session_input_info(session, i, &info), "input info");
    print_info("input ", i, info);
  }
  for (size_t i = 0; i < n_out; ++i) {
    CHECK(kiln_session_output_info(session, i, &info), "output info");
    print_info("output", i, info);
  }
  if (a.info_only) { kiln_session_destroy(session); return 0; }
  if (a.n_inputs && (size_t)a.n_inputs != n_in) return usage("give every input or none");

  /* Inputs: the model's dims, symbolic ones 1 (--dim fixed them in the session already). */
  static int64_t in_dims[MAX_TENSORS][MAX_RANK];
  kiln_tensor inputs[MAX_TENSORS] = {{0}};
  for (size_t i = 0; i < n_in; ++i) {
    int64_t rank;
    kiln_dtype dt;
    kiln_session_input_info(session, i, &info);
    kiln_tensor_info_dtype(info, &dt);
    kiln_tensor_info_rank(info, &rank);
    if (a.n_inputs && a.shapes[i]) {
      if ((rank = parse_shape(a.shapes[i], in_dims[i])) < 0) return usage("--shape takes D1xD2... (at most 64 dims)");
    } else {
      if (rank < 0 || rank > MAX_RANK) return usage("an input of unknown rank: give its --shape");
      kiln_tensor_info_dims(info, in_dims[i], MAX_RANK);
    }
    size_t n = 1;
    for (int64_t k = 0; k < rank; ++k) {
      if (in_dims[i][k] < 0) in_dims[i][k] = 1;
      n *= (size_t)in_dims[i][k];
    }
    inputs[i] = (kiln_tensor){dt, (size_t)rank, in_dims[i], NULL, n * kiln_dtype_size(dt), NULL};
    inputs[i].data = malloc(inputs[i].byte_size ? inputs[i].byte_size : 1);
    if (a.n_inputs) {
      if ((rc = read_file(a.inputs[i], inputs[i].data, inputs[i].byte_size))) return rc;
    } else {
      fill_random(dt, inputs[i].data, n, &a.seed);
    }
  }

  /* Outputs: into buffers sized by kiln_session_output_dims, or allocated by kiln. */
  static int64_t out_dims[MAX_TENSORS][MAX_RANK];
  kiln_tensor outputs[MAX_TENSORS] = {{0}};
  int alloc = a.alloc;
  for (size_t i = 0; i < n_out && !alloc; ++i) {
    int64_t rank;
    CHECK(kiln_session_output_dims(session, inputs, n_in, i, out_dims[i], MAX_RANK, &rank), "output dims");
    kiln_dtype dt;
    kiln_session_output_info(session, i, &info);
    kiln_tensor_info_dtype(info, &dt);
    size_t n = 1;
    for (int64_t k = 0; k < rank; ++k) {
      if (out_dims[i][k] < 0) alloc = 1; /* only the data decides: let kiln allocate */
      else n *= (size_t)out_dims[i][k];
    }
    outputs[i] = (kiln_tensor){dt, (size_t)rank, out_dims[i], NULL, n * kiln_dtype_size(dt), NULL};
    outputs[i].data = malloc(outputs[i].byte_size ? outputs[i].byte_size : 1);
  }
  if (alloc) {
    for (size_t i = 0; i < n_out; ++i) free(outputs[i].data);
    CHECK(kiln_session_run_alloc(session, inputs, n_in, outputs, n_out), "run");
  } else {
    CHECK(kiln_session_run(session, inputs, n_in, outputs, n_out), "run");
  }
  if (a.runs > 0 && !alloc) { /* the first run above was the warm-up */
    double* ms = malloc(sizeof(double) * (size_t)a.runs);
    for (int r = 0; r < a.runs; ++r) {
      const double t = now_ms();
      CHECK(kiln_session_run(session, inputs, n_in, outputs, n_out), "run");
      ms[r] = now_ms() - t;
    }
    qsort(ms, (size_t)a.runs, sizeof(double), compare_doubles);
    printf("%d runs: median %.3f ms, fastest %.3f ms\n", a.runs, ms[a.runs / 2], ms[0]);
    free(ms);
  }

  for (size_t i = 0; i < n_out; ++i) {
    const char* name;
    kiln_session_output_info(session, i, &info);
    kiln_tensor_info_name(info, &name);
    print_stats(i, name, &outputs[i]);
    if (a.outputs_dir && (rc = write_output(a.outputs_dir, i, &outputs[i]))) return rc;
  }
  for (size_t i = 0; i < n_out; ++i) {
    if (alloc) kiln_tensor_release(&outputs[i]);
    else free(outputs[i].data);
  }
  for (size_t i = 0; i < n_in; ++i) free(inputs[i].data);
  kiln_session_destroy(session);
  return 0;
}
