/* tensor.h -- owned n-d tensors and the tensor files: .safetensors, .npy
   and the tensor-core vector text format */
#ifndef BF16EMU_ANALYSIS_TENSOR_H
#define BF16EMU_ANALYSIS_TENSOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The format descriptors of softfloat.h; declared here so this header
   stands alone. */
struct sf_format;

/*----------------------------------------------------------------------------
 * Element types.  The names are the safetensors spellings.
 *--------------------------------------------------------------------------*/
typedef enum
{
    TENSOR_ANY = 0, /* for reads: whatever the file holds */
    TENSOR_BF16,
    TENSOR_F16,
    TENSOR_F32,
    TENSOR_F64,
    TENSOR_I32,
    TENSOR_U16,
    TENSOR_U32,
    TENSOR_F8_E4M3, /* OCP E4M3 (no infinities) */
    TENSOR_F8_E5M2, /* OCP E5M2 */
    TENSOR_U8,
    TENSOR_I8,
    TENSOR_I16,
    TENSOR_I64,
    TENSOR_U64,
    TENSOR_BOOL /* one byte per element */
} tensor_dtype;
#define TENSOR_N_DTYPES 16

/* Bytes per element: 1, 2, 4 or 8; 0 for TENSOR_ANY and invalid values. */
size_t tensor_dtype_size(tensor_dtype dt);

/* "BF16", "F32", ..., "F8_E4M3", "BOOL"; "ANY" for TENSOR_ANY; NULL for an
   invalid value. */
const char *tensor_dtype_name(tensor_dtype dt);

/* Parses NAME case-insensitively: the names above, and the softfloat format
   names "bf16", "f16", "fp16", "f32", "fp32", "f64", "fp64", "e4m3",
   "e5m2".  Returns false (and leaves *OUT alone) for anything else. */
bool tensor_dtype_parse(const char *name, tensor_dtype *out);

/* The softfloat format of a floating-point dtype (BF16 -> &sf_format_bf16,
   F16, F32, F64, F8_E4M3 -> e4m3, F8_E5M2 -> e5m2); NULL for the integer
   types, BOOL and TENSOR_ANY. */
const struct sf_format *tensor_dtype_format(tensor_dtype dt);

/* The dtype that stores values of FMT: the inverse of tensor_dtype_format,
   and TF32 -> F32 (TF32 is stored in 32 bits); TENSOR_ANY for NULL or a
   format without a dtype. */
tensor_dtype tensor_dtype_from_format(const struct sf_format *fmt);

/*----------------------------------------------------------------------------
 * Errors.  Every function that can fail returns 0 or one of these codes and,
 * when ERR is not NULL, fills ERR with the same code and a one-line message
 * "FILE: FIELD: what was found and what was expected" (FIELD is left out
 * when the whole file is meant).  Nothing is printed.
 *--------------------------------------------------------------------------*/
typedef enum
{
    TENSOR_OK = 0,
    TENSOR_E_IO,          /* the system refused: open, read, write, rename */
    TENSOR_E_FORMAT,      /* malformed or truncated file */
    TENSOR_E_UNSUPPORTED, /* well formed, but not supported (Fortran order,
                             .npy 4.0, more than TENSOR_MAX_DIMS dims) */
    TENSOR_E_LIMIT,       /* sizes past TENSOR_MAX_BYTES or another limit */
    TENSOR_E_NOMEM,       /* out of memory */
    TENSOR_E_EXISTS,      /* the output exists and force was not given */
    TENSOR_E_KEY,         /* no tensor of that name, or no key given and
                             the file holds several tensors */
    TENSOR_E_DTYPE,       /* the file's dtype is not the one asked for */
    TENSOR_E_ARG          /* an invalid argument (a caller's bug) */
} tensor_status;
#define TENSOR_N_STATUS 10

/* The N names NAMES[i] as "a, b, c" into BUF (SIZE bytes), for messages:
   bytes outside printable ASCII, '"' and '\\' escaped as \xNN, each name
   cut after 40 characters, and the list cut with "... (N in all)" to stay
   within about 300 bytes (TENSOR_NAME_LIST_SIZE holds it).  Returns
   BUF. */
char *tensor_name_list(char *buf, size_t size, const char *const *names,
                       size_t n);
#define TENSOR_NAME_LIST_SIZE 400

/* "ok", "io", "format", "unsupported", "limit", "nomem", "exists", "key",
   "dtype", "arg"; NULL for other values. */
const char *tensor_status_name(int code);

#define TENSOR_ERROR_SIZE 1024
typedef struct
{
    int code;                        /* a tensor_status */
    char message[TENSOR_ERROR_SIZE]; /* "" when code is TENSOR_OK; long
                                        messages are cut */
} tensor_error;

/*----------------------------------------------------------------------------
 * Tensors.  A tensor owns its data: n_bytes bytes, elements in C (row-major)
 * order, each element little-endian whatever the host.  A tensor with no
 * dimensions is a scalar (one element).  A tensor with a zero dimension has
 * no elements and data == NULL.
 *
 * Limits (contract): at most TENSOR_MAX_DIMS dimensions; at most
 * TENSOR_MAX_BYTES bytes of data.  Readers check both, from the file's
 * header, before they allocate anything.
 *--------------------------------------------------------------------------*/
#define TENSOR_MAX_DIMS 8
#define TENSOR_MAX_BYTES ((uint64_t)1 << 40)

typedef struct
{
    tensor_dtype dtype;
    unsigned ndim;
    uint64_t shape[TENSOR_MAX_DIMS]; /* entries past ndim are 0 */
    uint64_t n_elems;                /* product of shape[0..ndim) */
    size_t n_bytes;                  /* n_elems * tensor_dtype_size */
    unsigned char *data;             /* malloc'ed; NULL when n_bytes is 0 */
} tensor;

/* An empty tensor: safe to pass to tensor_free, and to any reader as OUT. */
#define TENSOR_INIT                                                           \
    {                                                                         \
        TENSOR_ANY, 0, {0}, 0, 0, NULL                                        \
    }

/* Makes *T a zero-filled tensor of DTYPE and shape SHAPE[0..NDIM) (SHAPE may
   be NULL when NDIM is 0).  DTYPE must not be TENSOR_ANY.  On error *T is
   left empty (TENSOR_INIT). */
int tensor_alloc(tensor *t, tensor_dtype dtype, unsigned ndim,
                 const uint64_t *shape, tensor_error *err);

/* Frees T's data and makes it empty.  T may be NULL. */
void tensor_free(tensor *t);

/* Element I (in C order, I < t->n_elems) as its bits, zero-extended; 0
   when I is out of range. */
uint64_t tensor_get_bits(const tensor *t, uint64_t i);

/* Stores the low tensor_dtype_size bytes of BITS as element I; does
   nothing when I is out of range. */
void tensor_set_bits(tensor *t, uint64_t i, uint64_t bits);

/* The C-order position of the element at IDX[0..t->ndim) in *FLAT; false
   (and *FLAT untouched) when an index is out of range. */
bool tensor_flat_index(const tensor *t, const uint64_t *idx, uint64_t *flat);

/* Whether a file's dtype FILE_DT can be read as WANT: WANT is TENSOR_ANY or
   FILE_DT, or the file holds raw unsigned integers of the same size that
   the caller names as a float type: U16 as BF16 or F16, U8 as F8_E4M3 or
   F8_E5M2 (no conversion happens: the bits are kept). */
bool tensor_dtype_readable_as(tensor_dtype file_dt, tensor_dtype want);

/*----------------------------------------------------------------------------
 * Reading any tensor file.
 *
 * tensor_file_read reads one tensor from PATH into *OUT, which must be
 * empty (TENSOR_INIT) and stays empty on error.  The file type comes from
 * the extension (".safetensors", ".npy"), else from the content (the .npy
 * magic, else a safetensors header).  KEY names the tensor of a
 * safetensors file; NULL takes the only tensor and is an error (E_KEY)
 * when there are several.  A .npy file holds one unnamed array: KEY must
 * be NULL.  WANT is checked with tensor_dtype_readable_as (E_DTYPE); the
 * tensor gets WANT's dtype when it is not TENSOR_ANY, so a '<u2' .npy read
 * with WANT = TENSOR_BF16 is a BF16 tensor.
 *--------------------------------------------------------------------------*/
int tensor_file_read(const char *path, const char *key, tensor_dtype want,
                     tensor *out, tensor_error *err);

/*----------------------------------------------------------------------------
 * .safetensors: an 8-byte little-endian header length N, N bytes of JSON
 * (an object; each key a tensor name, each value {"dtype": "BF16", "shape":
 * [2, 3], "data_offsets": [begin, end]}, offsets relative to the data that
 * follows the header; plus "__metadata__": an object of strings), then the
 * data.
 *
 * The reader accepts exactly what the format allows and checks, before it
 * allocates any tensor: the header length against the file size (and at
 * most 100000000 bytes); that the header is one JSON object with no
 * duplicate keys; every entry's fields, with no others; known dtypes;
 * non-negative integer shapes of at most TENSOR_MAX_DIMS dims and at most
 * TENSOR_MAX_BYTES bytes; end - begin = the shape's byte count; and that
 * the tensors cover the data region exactly: sorted by offset, each begins
 * where the previous ended, the first at 0, the last ends at the end of
 * the file, so no byte belongs to two tensors or to none.  Files written
 * by the reference implementation always satisfy this; a file that does
 * not is reported (E_FORMAT), never half read.
 *--------------------------------------------------------------------------*/

/* A tensor with its name. */
typedef struct
{
    const char *name;
    tensor tensor;
} tensor_named;

/* One "__metadata__" entry. */
typedef struct
{
    const char *key;
    const char *value;
} tensor_meta;

/* A whole safetensors file: its tensors in the order of their data
   offsets, and its metadata in header order.  strings owns every name,
   key and value. */
typedef struct
{
    size_t n_tensors;
    tensor_named *tensors;
    size_t n_meta;
    tensor_meta *meta;
    char *strings;
} tensor_file;

#define TENSOR_FILE_INIT                                                      \
    {                                                                         \
        0, NULL, 0, NULL, NULL                                                \
    }

/* Reads every tensor and the metadata of the safetensors file PATH into
   *OUT (which must be empty, TENSOR_FILE_INIT; it stays empty on error).
   WANT applies to every tensor as in tensor_file_read. */
int safetensors_read_all(const char *path, tensor_dtype want, tensor_file *out,
                         tensor_error *err);

/* Reads the tensor KEY (NULL: the only one) as in tensor_file_read; only
   that tensor's bytes are read, after the whole header is checked. */
int safetensors_read(const char *path, const char *key, tensor_dtype want,
                     tensor *out, tensor_error *err);

/* Frees everything F owns and makes it empty.  F may be NULL. */
void tensor_file_free(tensor_file *f);

/* Writes the N tensors of LIST (names non-empty, valid UTF-8, distinct and
   not "__metadata__") and the N_META entries of META (keys distinct, keys
   and values valid UTF-8; N_META = 0 writes no "__metadata__") to PATH.
   The header is compact JSON with the metadata first, then the tensors in
   LIST order, padded with spaces to a multiple of 8 bytes; the data
   follows in LIST order, without gaps.  The file appears atomically: it
   is written to a temporary file in the same directory, flushed to disk
   and renamed; on error no file is left behind and PATH is unchanged.  An
   existing PATH is an error (E_EXISTS) unless FORCE is true. */
int safetensors_write(const char *path, const tensor_named *list, size_t n,
                      const tensor_meta *meta, size_t n_meta, bool force,
                      tensor_error *err);

/*----------------------------------------------------------------------------
 * .npy (NumPy format versions 1.0, 2.0 and 3.0): magic "\x93NUMPY", major
 * and minor version bytes, the header length (2 bytes in 1.0, 4 in 2.0 and
 * 3.0, little-endian), the header (a Python dict literal {'descr': '<f4',
 * 'fortran_order': False, 'shape': (2, 3), }), then the data.
 *
 * Read dtypes: '<u2' (U16, or BF16 / F16 when WANT asks), '<f2', '<f4',
 * '<f8', '<i4', '<u4', '|u1' (U8, or F8_E4M3 / F8_E5M2 when WANT asks),
 * '|i1', '<i2', '<i8', '<u8', '|b1', and their big-endian '>' forms (the
 * bytes are swapped to little-endian); 'V2' and 'V1' (raw bytes) read as
 * the 2- and 1-byte float types WANT names.  Only C order:
 * 'fortran_order': True is E_UNSUPPORTED.  The data must be exactly the
 * shape's byte count: fewer bytes is a truncated file, more is a
 * shape/data size mismatch (both E_FORMAT).
 *--------------------------------------------------------------------------*/
int npy_read(const char *path, tensor_dtype want, tensor *out,
             tensor_error *err);

/* Writes T to PATH as .npy version 1.0 (with at most TENSOR_MAX_DIMS
   dimensions the header always fits in 1.0's 65535 bytes), atomically and
   refusing to replace PATH unless FORCE, as safetensors_write.  The
   header is {'descr': D, 'fortran_order': False, 'shape': S, } padded with
   spaces and a final newline to a multiple of 64 bytes.  D is the
   little-endian type of T's dtype; NumPy has no BF16 or FP8 types, so
   BF16 is written as '<u2' and F8_E4M3 / F8_E5M2 as '|u1' (read them back
   with WANT). */
int npy_write(const char *path, const tensor *t, bool force,
              tensor_error *err);

/*----------------------------------------------------------------------------
 * Listing a file: what it holds, from its header alone (no tensor data is
 * read, so a file of any size is listed at once).  The header is checked
 * as the readers check it; a .npy file in Fortran order, or of raw bytes
 * ('V2'), is listed (the readers refuse the first and need a dtype for the
 * second).
 *--------------------------------------------------------------------------*/
typedef enum
{
    TENSOR_KIND_SAFETENSORS = 1,
    TENSOR_KIND_NPY = 2
} tensor_kind;

/* One tensor of a listing. */
typedef struct
{
    const char *name;  /* the safetensors key; "" for a .npy file */
    tensor_dtype dtype; /* as the file stores it; TENSOR_ANY for raw bytes */
    unsigned ndim;
    uint64_t shape[TENSOR_MAX_DIMS];
    uint64_t n_elems, n_bytes;
    uint64_t offset; /* of its first byte, from the start of the file */
} tensor_entry;

typedef struct
{
    tensor_kind kind;
    uint64_t file_size;
    uint64_t data_offset; /* the bytes before the data (length + header) */
    unsigned npy_version; /* .npy: 1, 2 or 3 */
    bool npy_fortran;     /* .npy: 'fortran_order': True */
    char npy_descr[32];   /* .npy: the 'descr' as written, "<u2" */
    size_t n_tensors;
    tensor_entry *tensors; /* in the order of their data */
    size_t n_meta;
    tensor_meta *meta; /* safetensors "__metadata__", in header order */
    char *strings;     /* owns every name, key and value */
} tensor_listing;

#define TENSOR_LISTING_INIT                                                   \
    {                                                                         \
        0, 0, 0, 0, false, "", 0, NULL, 0, NULL, NULL                         \
    }

/* Lists PATH into *OUT (empty on entry, TENSOR_LISTING_INIT; empty again on
   error): a .safetensors or .npy file, told apart as tensor_file_read
   does. */
int tensor_file_list(const char *path, tensor_listing *out, tensor_error *err);
int safetensors_list(const char *path, tensor_listing *out, tensor_error *err);
int npy_list(const char *path, tensor_listing *out, tensor_error *err);

/* Frees everything L owns and makes it empty.  L may be NULL. */
void tensor_listing_free(tensor_listing *l);

/*----------------------------------------------------------------------------
 * Tensor-core vector text files (published BF16 x BF16 + FP32 -> FP32
 * validation vectors).  One vector per line.  a_*_bf16.txt and
 * b_*_bf16.txt: 16 words of 8 hex digits separated by blanks, each an FP32
 * bit pattern whose low 16 bits are zero (the BF16 value is the high
 * half).  c_*_fp32.txt and d_*_fp32.txt: one FP32 bit pattern as 32
 * binary digits.  Lines may end in "\r\n"; blanks around words are
 * ignored; empty lines are allowed only at the end.  A file holds at
 * least one vector.
 *--------------------------------------------------------------------------*/
#define TCVEC_K 16

/* Reads an a/b file into *OUT: a [N, 16] BF16 tensor. */
int tcvec_read_ab(const char *path, tensor *out, tensor_error *err);

/* Reads a c/d file into *OUT: an [N] F32 tensor. */
int tcvec_read_cd(const char *path, tensor *out, tensor_error *err);

/* One set: D[i] is the device's result for sum_k A[i,k] B[i,k] + C[i]. */
typedef struct
{
    tensor a, b, c, d;
} tcvec_set;

#define TCVEC_SET_INIT                                                        \
    {                                                                         \
        TENSOR_INIT, TENSOR_INIT, TENSOR_INIT, TENSOR_INIT                    \
    }

/* Reads DIR/a_NAME_bf16.txt, DIR/b_NAME_bf16.txt, DIR/c_NAME_fp32.txt and
   DIR/d_NAME_fp32.txt (NAME e.g. "H200") into *OUT (empty on entry; empty
   again on error) and checks that the four hold the same number of
   vectors. */
int tcvec_read_set(const char *dir, const char *name, tcvec_set *out,
                   tensor_error *err);

/* Frees the four tensors of S.  S may be NULL. */
void tcvec_set_free(tcvec_set *s);

#ifdef __cplusplus
}
#endif

#endif
