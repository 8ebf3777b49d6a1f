/*
 * kiln.h: the C API of kiln, an ONNX compiler and CPU runtime, for embedding it in a program.
 * Link with libkiln.so. docs/capi.md has the whole story and a complete example.
 *
 *   kiln_session* s;
 *   if (kiln_session_create("model.onnx", NULL, &s) != KILN_OK) {
 *     fprintf(stderr, "%s\n", kiln_last_error());
 *     return 2;
 *   }
 *   kiln_tensor in = {KILN_DTYPE_FLOAT32, 2, dims, x, sizeof x};
 *   kiln_tensor out = {KILN_DTYPE_FLOAT32, 0, NULL, y, sizeof y};
 *   kiln_status st = kiln_session_run(s, &in, 1, &out, 1);
 *   kiln_session_destroy(s);
 *
 * Conventions
 * - Every function that can fail returns a kiln_status; KILN_OK (0) is success. After any call
 *   that returns a status, kiln_last_error() is that call's one-line message ("" on success),
 *   kept per thread, so concurrent callers never see each other's messages.
 * - No C++ exception and no signal leaves the library for bad input: a malformed or hostile model
 *   file, wrong inputs or a too-small buffer are a status and a message.
 * - Handles are opaque. Strings and info returned by a session stay valid until the session is
 *   destroyed. Destroy functions accept NULL.
 * - Buffers are dense and row-major (C order). Sub-byte element types (int4, uint4, int2, uint2,
 *   float4e2m1) take one byte per element, sign-extended where signed.
 *
 * Threads
 * - A session may be used from any thread. Runs of one session are serialized: a second
 *   kiln_session_run on the same session waits for the first (the engine keeps one set of
 *   buffers per session). Different sessions run in parallel. The describing functions (counts,
 *   names, dtypes, dims) read immutable data and never wait.
 * - Kernels run on OpenMP threads (libgomp), kiln_options_set_threads of them per run.
 *
 * Versions
 * - KILN_API_VERSION is the version of this header; kiln_api_version() is the one libkiln.so was
 *   built with. Functions are only ever added within a version; a change that breaks a caller
 *   raises it. kiln_version() is kiln's release ("0.1.0").
 */
#ifndef KILN_KILN_H_
#define KILN_KILN_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define KILN_API __attribute__((visibility("default")))
#else
#define KILN_API
#endif

#define KILN_API_VERSION 1

/* ---- versions, status, messages --------------------------------------------------------- */

KILN_API int kiln_api_version(void);     /* KILN_API_VERSION of the library */
KILN_API const char* kiln_version(void); /* kiln's release, "0.1.0" */

typedef enum kiln_status {
  KILN_OK = 0,
  KILN_ERROR_INVALID_ARGUMENT = 1, /* misuse: a NULL handle or pointer, an index out of range, an
                                      option value out of range */
  KILN_ERROR_IO = 2,               /* a file that cannot be read: missing, a folder, no permission */
  KILN_ERROR_BAD_MODEL = 3,        /* the model is malformed or hostile, or fails a check */
  KILN_ERROR_BAD_INPUT = 4,        /* inputs that do not fit the model: count, element type,
                                      rank, dims, byte size */
  KILN_ERROR_BUFFER_TOO_SMALL = 5, /* an output buffer (or a dims array) smaller than needed; the
                                      message says how large it must be */
  KILN_ERROR_UNSUPPORTED = 6,      /* valid, but not something kiln runs (an op, a non-tensor
                                      input, an artifact for another CPU or kiln version) */
  KILN_ERROR_RUNTIME = 7,          /* a failure while running: the allocation cap, an index in
                                      the input data out of range, out of memory */
  KILN_ERROR_INTERNAL = 8,         /* a bug in kiln: please report it with the message */
  /* Not values to use: they make every int a value of the type in C++ (its range), so a wrong
     value a caller passes is refused instead of being undefined behaviour. */
  KILN_STATUS_RANGE_MIN_ = -2147483647 - 1,
  KILN_STATUS_RANGE_MAX_ = 2147483647
} kiln_status;

/* The message of the last call on this thread that returned a status: one line naming what and
 * where ("input 0 'x': dims [2,768], the model takes [batch,768] with ... "), "" after success.
 * Valid until the next kiln call on this thread. Never NULL. */
KILN_API const char* kiln_last_error(void);
/* "KILN_OK", "KILN_ERROR_BAD_MODEL" ...; "KILN_ERROR_UNKNOWN" for a value not in the enum. */
KILN_API const char* kiln_status_name(kiln_status status);

/* ---- element types ------------------------------------------------------------------------ */

/* The values are ONNX's TensorProto.DataType. */
typedef enum kiln_dtype {
  KILN_DTYPE_UNDEFINED = 0,
  KILN_DTYPE_FLOAT32 = 1,
  KILN_DTYPE_UINT8 = 2,
  KILN_DTYPE_INT8 = 3,
  KILN_DTYPE_UINT16 = 4,
  KILN_DTYPE_INT16 = 5,
  KILN_DTYPE_INT32 = 6,
  KILN_DTYPE_INT64 = 7,
  KILN_DTYPE_STRING = 8, /* described, but not fed or returned through this API */
  KILN_DTYPE_BOOL = 9,   /* one byte, 0 or 1 */
  KILN_DTYPE_FLOAT16 = 10,
  KILN_DTYPE_FLOAT64 = 11,
  KILN_DTYPE_UINT32 = 12,
  KILN_DTYPE_UINT64 = 13,
  KILN_DTYPE_COMPLEX64 = 14,
  KILN_DTYPE_COMPLEX128 = 15,
  KILN_DTYPE_BFLOAT16 = 16,
  KILN_DTYPE_FLOAT8E4M3FN = 17,
  KILN_DTYPE_FLOAT8E4M3FNUZ = 18,
  KILN_DTYPE_FLOAT8E5M2 = 19,
  KILN_DTYPE_FLOAT8E5M2FNUZ = 20,
  KILN_DTYPE_UINT4 = 21,
  KILN_DTYPE_INT4 = 22,
  KILN_DTYPE_FLOAT4E2M1 = 23,
  KILN_DTYPE_FLOAT8E8M0 = 24,
  KILN_DTYPE_UINT2 = 25,
  KILN_DTYPE_INT2 = 26,
  /* Not values to use: they make every int a value of the type in C++ (its range), so a wrong
     value a caller passes is refused instead of being undefined behaviour. */
  KILN_DTYPE_RANGE_MIN_ = -2147483647 - 1,
  KILN_DTYPE_RANGE_MAX_ = 2147483647
} kiln_dtype;

/* Bytes one element takes in a buffer (1 for the sub-byte types); 0 for STRING, UNDEFINED and
 * values not in the enum. */
KILN_API size_t kiln_dtype_size(kiln_dtype dtype);
/* ONNX's spelling: "float", "int64", "bfloat16" ...; "undefined" for values not in the enum. */
KILN_API const char* kiln_dtype_name(kiln_dtype dtype);

/* ---- options ------------------------------------------------------------------------------ */

typedef struct kiln_options kiln_options;

typedef enum kiln_precision {
  KILN_PRECISION_FP32 = 0, /* default */
  KILN_PRECISION_BF16 = 1, /* convs and matmuls with constant weights in bf16 where the CPU has
                              native bf16 (AVX-512 BF16, AMX); float32 elsewhere (said once on
                              stderr). Results stay float32. */
  /* Not values to use: they make every int a value of the type in C++ (its range), so a wrong
     value a caller passes is refused instead of being undefined behaviour. */
  KILN_PRECISION_RANGE_MIN_ = -2147483647 - 1,
  KILN_PRECISION_RANGE_MAX_ = 2147483647
} kiln_precision;

/* Defaults: threads 0 (OpenMP's default: all cores), optimize level 2, precision FP32, newer
 * opsets refused, the default allocation cap, no fixed dims, external data beside the model file
 * (from memory: the current directory). A session copies its options: destroy them when you like. */
KILN_API kiln_status kiln_options_create(kiln_options** out);
KILN_API void kiln_options_destroy(kiln_options* options);
KILN_API kiln_status kiln_options_set_threads(kiln_options* options, int threads); /* 0..1024 */
/* kiln optimize's -O level run before planning: 0 (the graph as it is) .. 3. */
KILN_API kiln_status kiln_options_set_optimize_level(kiln_options* options, int level);
KILN_API kiln_status kiln_options_set_precision(kiln_options* options, kiln_precision precision);
/* Nonzero: opsets newer than kiln knows load with a warning on stderr instead of failing. */
KILN_API kiln_status kiln_options_set_allow_newer_opset(kiln_options* options, int allow);
/* The largest tensor a run may allocate, in bytes (> 0); larger ones fail with KILN_ERROR_RUNTIME. */
KILN_API kiln_status kiln_options_set_allocation_cap(kiln_options* options, int64_t bytes);
/* Fixes the symbolic input dim NAME ("batch") to VALUE (>= 1) in every input at creation, so the
 * session plans once, up front, and reports that dim as known. Setting a name again replaces it. */
KILN_API kiln_status kiln_options_set_dim(kiln_options* options, const char* name, int64_t value);
/* The folder whose files a model created from memory reads its external data from. */
KILN_API kiln_status kiln_options_set_external_data_dir(kiln_options* options, const char* dir);

/* ---- sessions ----------------------------------------------------------------------------- */

typedef struct kiln_session kiln_session;

/* PATH names an ONNX model or a compiled kiln artifact (kiln compile); the format is told by the
 * file's first bytes, not its name. An ONNX model is loaded, checked (it is untrusted input),
 * shape-inferred, optimized and, when every input dim is known, planned. An artifact is checked
 * against this machine first (KILN_ERROR_UNSUPPORTED, saying what to recompile with, when it
 * cannot run here), then read (KILN_ERROR_BAD_MODEL when damaged), with its pre-packed weights
 * and the plans of its declared shapes; kiln_options_set_dim does not apply to it (its shapes
 * were declared at compile). OPTIONS may be NULL (the defaults). */
KILN_API kiln_status kiln_session_create(const char* path, const kiln_options* options,
                                         kiln_session** out);
/* The same from SIZE bytes at DATA (copied as needed; free them after the call). */
KILN_API kiln_status kiln_session_create_from_memory(const void* data, size_t size,
                                                     const kiln_options* options,
                                                     kiln_session** out);
KILN_API void kiln_session_destroy(kiln_session* session);

/* ---- describing inputs and outputs -------------------------------------------------------- */

/* What one input or output is: owned by the session, valid while it lives. */
typedef struct kiln_tensor_info kiln_tensor_info;

/* The inputs a caller feeds (graph inputs without a constant initializer) and the outputs, in the
 * model's order: kiln_session_run takes and gives them in this order. */
KILN_API kiln_status kiln_session_input_count(const kiln_session* session, size_t* count);
KILN_API kiln_status kiln_session_output_count(const kiln_session* session, size_t* count);
KILN_API kiln_status kiln_session_input_info(const kiln_session* session, size_t index,
                                             const kiln_tensor_info** info);
KILN_API kiln_status kiln_session_output_info(const kiln_session* session, size_t index,
                                              const kiln_tensor_info** info);

KILN_API kiln_status kiln_tensor_info_name(const kiln_tensor_info* info, const char** name);
/* KILN_DTYPE_UNDEFINED for a value that is not a tensor (a sequence, an optional, a map). */
KILN_API kiln_status kiln_tensor_info_dtype(const kiln_tensor_info* info, kiln_dtype* dtype);
/* -1 when the model does not say the rank. */
KILN_API kiln_status kiln_tensor_info_rank(const kiln_tensor_info* info, int64_t* rank);
/* Writes rank entries to DIMS: the size, or -1 for a symbolic or unknown dim. CAPACITY below the
 * rank is KILN_ERROR_BUFFER_TOO_SMALL; a value of unknown rank, KILN_ERROR_INVALID_ARGUMENT. */
KILN_API kiln_status kiln_tensor_info_dims(const kiln_tensor_info* info, int64_t* dims,
                                           size_t capacity);
/* The symbol of dim AXIS ("batch", or an expression of symbols such as "2*seq" for outputs); ""
 * for a known dim or an unknown one without a name. */
KILN_API kiln_status kiln_tensor_info_dim_name(const kiln_tensor_info* info, size_t axis,
                                               const char** name);

/* ---- running -------------------------------------------------------------------------------- */

/* A tensor in memory the caller owns (or, from kiln_session_run_alloc, that kiln owns until
 * kiln_tensor_release). */
typedef struct kiln_tensor {
  kiln_dtype dtype;
  size_t rank;
  const int64_t* dims; /* rank entries (may be NULL when rank is 0) */
  void* data;          /* dense, row-major; kiln reads inputs in place and never writes them */
  size_t byte_size;    /* bytes at data: inputs exactly elements * kiln_dtype_size, outputs at least */
  void* owner;         /* kiln's, set by kiln_session_run_alloc; NULL in tensors the caller fills */
} kiln_tensor;

/* The dims output OUTPUT_INDEX will have when the session runs on inputs of these dtypes and dims
 * (INPUTS as for kiln_session_run; their data is not read and may be NULL). Plans the run if it
 * was not planned yet, so the run after it starts at once. Writes the rank to *RANK and rank dims
 * to DIMS; a dim only the data decides (NonZero, a data-dependent Reshape) is -1: run with
 * kiln_session_run_alloc then. CAPACITY below the rank: KILN_ERROR_BUFFER_TOO_SMALL with *RANK set. */
KILN_API kiln_status kiln_session_output_dims(kiln_session* session, const kiln_tensor* inputs,
                                              size_t input_count, size_t output_index,
                                              int64_t* dims, size_t capacity, int64_t* rank);

/* Runs the model on INPUTS (input_count == kiln_session_input_count, in that order) into buffers
 * the caller owns: OUTPUTS[i] gives data and byte_size (at least what the output takes), its
 * dtype (which must be the output's) and, optionally, dims (rank and dims; when dims is non-NULL
 * they must equal the output's dims). An output whose data is NULL is not written. Too small a
 * buffer is KILN_ERROR_BUFFER_TOO_SMALL naming the bytes needed, checked before the run when the
 * plan knows the output's dims, else after it (the outputs are then not written). Results are
 * copied into the buffers (memmove: a buffer may be an input's). output_count must equal
 * kiln_session_output_count. */
KILN_API kiln_status kiln_session_run(kiln_session* session, const kiln_tensor* inputs,
                                      size_t input_count, kiln_tensor* outputs,
                                      size_t output_count);

/* The same, with the outputs in memory kiln allocates: every OUTPUTS[i] is filled (dtype, rank,
 * dims, data, byte_size, owner): one 64-byte aligned block per output holding its dims and data,
 * the result copied in once. Each must be given back with kiln_tensor_release, also after the
 * session is destroyed. On failure no output is filled. */
KILN_API kiln_status kiln_session_run_alloc(kiln_session* session, const kiln_tensor* inputs,
                                            size_t input_count, kiln_tensor* outputs,
                                            size_t output_count);
/* Frees what kiln_session_run_alloc put in TENSOR and zeroes it; a tensor without an owner
 * (zeroed, or the caller's own) is left as it is. NULL is fine. */
KILN_API void kiln_tensor_release(kiln_tensor* tensor);

#ifdef __cplusplus
}
#endif

#endif /* KILN_KILN_H_ */
