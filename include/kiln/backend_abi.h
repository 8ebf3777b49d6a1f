/* kiln's backend plugin ABI: what a shared library implements so that kiln can hand it parts of a
 * model (partitions) to compile and run. C only, versioned, no C++ types across the boundary.
 *
 * A plugin is a shared library named libkiln_backend_<name>.so exporting one function:
 *
 *     const kiln_backend_api* kiln_backend_entry(uint32_t host_abi_version);
 *
 * kiln (the host) passes the ABI version it was built with; the plugin returns its table, or NULL
 * when it cannot serve that version. The host refuses a table whose abi_version differs from its
 * own (KILN_BACKEND_ABI_VERSION) or whose struct_size is smaller than the host's table: a plugin
 * built for another ABI is a one-line refusal, never a crash. New members are only ever appended,
 * so struct_size also says which optional members (marked "optional: may be NULL") a table has.
 *
 * The graph the host describes (kiln_graph_desc) is kiln's IR after checks and shape inference,
 * for one set of input shapes: every dim is concrete. Ops are ONNX ops (domain "" is ai.onnx), in
 * kiln's normalized form (attributes moved to inputs as the newest opsets have them: Clip's min and
 * max are inputs). Tensors are row-major (NCHW for images); a plugin wanting another layout
 * converts at its partition's boundary (the host counts those boundary copies).
 *
 * Lifetimes: everything the host passes (descriptions, names, constant data) is valid only for the
 * duration of the call; a plugin copies what it keeps. Strings a plugin returns through `err`
 * buffers are copied by the host. Calls on one backend instance come from one thread at a time;
 * run() of one partition is never called concurrently with itself.
 *
 * Accelerators: this version runs on host memory and synchronously. A device backend fits the same
 * shape: a later ABI version appends optional members (alloc/free/copy of device buffers that
 * run() then receives in place of host pointers, and run_async returning a fence the host waits on
 * before it reads a partition's outputs); the host's side (src/backend/backend.h) already keeps a
 * compiled partition as an opaque object whose inputs and outputs are copied at the boundary.
 */
#ifndef KILN_BACKEND_ABI_H
#define KILN_BACKEND_ABI_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define KILN_BACKEND_ABI_VERSION 1u

/* Element types: ONNX's TensorProto.DataType numbers (1 float, 7 int64, 10 float16 ...). */
typedef int32_t kiln_dtype;
#define KILN_DTYPE_FLOAT 1

typedef enum kiln_attr_kind {
  KILN_ATTR_INT = 1,     /* i */
  KILN_ATTR_FLOAT = 2,   /* f */
  KILN_ATTR_STRING = 3,  /* s */
  KILN_ATTR_INTS = 4,    /* ints[n] */
  KILN_ATTR_FLOATS = 5,  /* floats[n] */
  KILN_ATTR_OTHER = 6    /* a kind the ABI does not carry (tensor, graph ...): only its name */
} kiln_attr_kind;

typedef struct kiln_attr {
  const char* name;
  int32_t kind; /* kiln_attr_kind */
  int64_t i;
  float f;
  const char* s;
  const int64_t* ints;
  const float* floats;
  int64_t n; /* elements of ints or floats */
} kiln_attr;

/* A value: a tensor with its element type and concrete dims; data is non-NULL for a constant
 * (an initializer, or a value kiln computed before the run), row-major. */
typedef struct kiln_value_desc {
  const char* name;
  kiln_dtype dtype;
  int32_t rank;
  const int64_t* dims;
  const void* data;
} kiln_value_desc;

/* A node: its op and attributes; inputs and outputs index the graph's values (-1: omitted). */
typedef struct kiln_node_desc {
  const char* name;
  const char* op_type;
  const char* domain;
  int32_t opset; /* of the node's domain */
  int32_t n_attrs;
  const kiln_attr* attrs;
  int32_t n_inputs;
  const int32_t* inputs;
  int32_t n_outputs;
  const int32_t* outputs;
} kiln_node_desc;

/* A graph: the whole model (claim) or one partition (compile). inputs/outputs index values: for a
 * partition, the values it reads from outside (in the order run() passes them) and the values it
 * makes for outside (in the order run() is given buffers for them). */
typedef struct kiln_graph_desc {
  int32_t n_values;
  const kiln_value_desc* values;
  int32_t n_nodes;
  const kiln_node_desc* nodes;
  int32_t n_inputs;
  const int32_t* inputs;
  int32_t n_outputs;
  const int32_t* outputs;
} kiln_graph_desc;

typedef struct kiln_backend kiln_backend;     /* a plugin's instance, opaque to the host */
typedef struct kiln_partition kiln_partition; /* a compiled partition, opaque to the host */

/* Return codes: 0 success (or "claimed"), nonzero failure with a reason in err. */
typedef struct kiln_backend_api {
  uint32_t abi_version; /* KILN_BACKEND_ABI_VERSION the plugin was built with */
  uint32_t struct_size; /* sizeof(kiln_backend_api) the plugin was built with */
  const char* name;     /* "xnnpack": the name --backends uses */
  const char* version;  /* the plugin's and its library's versions, for reports */

  /* A backend instance. options: "key=value;key=value" (threads=N, and the plugin's own). */
  int (*create)(const char* options, kiln_backend** out, char* err, size_t err_len);
  void (*destroy)(kiln_backend* backend);

  /* Whether the backend takes node `node` of graph g: 0 yes; else nonzero with the reason in
   * `why_not` ("op not supported", "dtype float64", "attribute auto_pad=SAME_UPPER" ...). */
  int (*claim)(kiln_backend* backend, const kiln_graph_desc* g, int32_t node, char* why_not,
               size_t why_not_len);

  /* Compiles a partition (connected nodes the backend claimed), or fails with the reason. */
  int (*compile)(kiln_backend* backend, const kiln_graph_desc* partition, kiln_partition** out,
                 char* err, size_t err_len);
  /* Runs it: inputs[i] holds partition input i (row-major, the dims compile saw), outputs[j] is a
   * caller-owned buffer for output j. */
  int (*run)(kiln_partition* partition, const void* const* inputs, void* const* outputs, char* err,
             size_t err_len);
  void (*destroy_partition)(kiln_partition* partition);
} kiln_backend_api;

typedef const kiln_backend_api* (*kiln_backend_entry_fn)(uint32_t host_abi_version);
#define KILN_BACKEND_ENTRY_SYMBOL "kiln_backend_entry"

#ifdef __cplusplus
}
#endif

#endif /* KILN_BACKEND_ABI_H */
