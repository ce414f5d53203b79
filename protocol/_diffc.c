/* protocol._diffc: the view diff of protocol/patch.py in C (issue 21, "native diff").

   Each function here mirrors one of patch.py's, named in its comment, and makes exactly what
   that one makes: the same op dicts in the same order (keys "op", "path", "value" in that
   order), holding the very value objects the Python puts in them (a sub-object of ``new``
   itself, never a copy), and the same encodings recorded in the diff's ``_OpBytes`` (its
   ``enc`` dict by id of the op and its ``keep`` list, passed here directly). tests/protocol/
   test_diffc.py compares the two on random documents.

   Where the Python encodes a value only to learn its size (``len(pack(new))``), the size is
   counted here (msgpack_size: the forms protocol.codec.pack writes, tested against it); where
   it needs the bytes (``_OpBytes.of``), protocol.codec.pack itself is called, so that they are
   the same bytes. Anything the counting does not know exactly (a subclass, a tuple, an int
   beyond 64 bits, a non-string key, a lone surrogate, deep nesting) is handed to pack too:
   every shortcut is exact or not taken.

   One difference of means, not of result: the ops of one call are held as their parts (name,
   parent path and step, value: ``Pending``) and made into dicts only when weighed by encoding
   or when they survive the size rule, since the rule drops most of the ops it weighs (a
   container's changes replaced by the container). An op that is dropped without ever being
   encoded leaves no trace in the Python either (not in ``enc``, not in ``keep``), so the ops
   and the encodings recorded are the same (see "The ops of one diff, made lazily").

   The module is set up once by protocol/patch.py (``setup``): the encoder, the path step
   caches (``_STEPS``, shared with the Python, and ``_AT``) and the op size constants, so that
   there is one source of each.

   Beside the diff, what a revision's views cost most in calls to other encoders (issue 21):
   the codec's bytes for the plain types (``pack``, ``canonical``, and ``join_ops``, the ops of
   a frame one after the other), its values back (``unpack``) and the view hash's BLAKE2b-64
   (``blake2b_state``, ``blake2b_hex``), each the same bytes or values as the one it stands in
   for (tests/protocol/test_native_encoding.py), and handing back to it whatever it does not
   write or read for certain. One extension, so that the build has one native module. */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>

/* What setup() gives (strong references, for the life of the process). */
static PyObject *pack_fn;     /* protocol.codec.pack */
static PyObject *steps;       /* patch._STEPS: key -> "/" + escape(key) */
static Py_ssize_t steps_max;  /* patch._STEPS_MAX */
static PyObject *at_steps;    /* patch._AT: "/0", "/1", ... */
static Py_ssize_t replace_head, add_head, remove_head;  /* patch._OP_SIZES */
static Py_ssize_t replace_overhead;                     /* patch._REPLACE_OVERHEAD */
static Py_ssize_t remove_least;                         /* patch._REMOVE_LEAST */

/* Interned strings: the op's keys and names, and escape()'s pieces. */
static PyObject *s_op, *s_path, *s_value, *s_replace, *s_add, *s_remove;
static PyObject *s_slash, *s_tilde, *s_tilde0, *s_tilde1;

#define NO_SIZE (-1) /* sizes_get: not among the sizes (the Python's None) */
#define FAILED (-2)  /* an exception is set */
#define MAX_DEPTH 100
/* msgpack_size's nesting bound: deeper values are measured by pack (ormsgpack's own limit is
   higher, and beyond it pack takes msgpack's path or raises: pack decides, not this file). */

static int ready(void)
{
    if (pack_fn == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "protocol._diffc: setup() was not called");
        return 0;
    }
    return 1;
}

/* ---- Sizes: len(pack(x)) without encoding ------------------------------------------------ */

/* The UTF-8 length of ``text``, read from its code points (no UTF-8 copy is made and cached
   in the string, as PyUnicode_AsUTF8AndSize would); -1 for a lone surrogate, which UTF-8
   cannot encode (``str.encode`` raises). */
static Py_ssize_t utf8_length(PyObject *text)
{
    Py_ssize_t n = PyUnicode_GET_LENGTH(text);
    if (PyUnicode_IS_ASCII(text))
        return n;
    int kind = PyUnicode_KIND(text);
    const void *data = PyUnicode_DATA(text);
    Py_ssize_t total = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        Py_UCS4 c = PyUnicode_READ(kind, data, i);
        if (c < 0x80)
            total += 1;
        else if (c < 0x800)
            total += 2;
        else if (c < 0x10000) {
            if (c >= 0xD800 && c <= 0xDFFF)
                return -1;
            total += 3;
        }
        else
            total += 4;
    }
    return total;
}

/* A msgpack str (or bin) header and ``n`` bytes: fixstr below 32, then str8, str16, str32. */
static Py_ssize_t str_form(Py_ssize_t n)
{
    if (n < 32)
        return n + 1;
    if (n < 0x100)
        return n + 2;
    if (n < 0x10000)
        return n + 3;
    return n + 5;
}

/* Mirrors patch._str_size: len(pack(text)) for a str; raises UnicodeEncodeError as
   ``text.encode()`` does for a lone surrogate. */
static Py_ssize_t str_size(PyObject *text)
{
    Py_ssize_t n = utf8_length(text);
    if (n < 0) {
        PyObject *raised = PyUnicode_AsUTF8String(text); /* (sets the encoder's own error) */
        Py_XDECREF(raised);
        if (raised != NULL) {
            PyErr_SetString(PyExc_SystemError, "protocol._diffc: a surrogate encoded");
        }
        return FAILED;
    }
    return str_form(n);
}

/* Mirrors patch._int_size: len(pack(n)) for an int (not a bool), or 0 beyond 64 bits (pack
   refuses those). The smallest form: positive fixint, uint8..uint64; negative fixint from -32,
   int8..int64. */
static Py_ssize_t int_size(PyObject *value)
{
    int overflow = 0;
    long long n = PyLong_AsLongLongAndOverflow(value, &overflow);
    if (overflow > 0) { /* at least 2**63: a uint64 if below 2**64 */
        unsigned long long u = PyLong_AsUnsignedLongLong(value);
        if (u == (unsigned long long)-1 && PyErr_Occurred()) {
            PyErr_Clear();
            return 0;
        }
        return 9;
    }
    if (overflow < 0)
        return 0;
    if (n == -1 && PyErr_Occurred()) { /* (not for an exact int; kept for safety) */
        PyErr_Clear();
        return 0;
    }
    if (n >= 0) {
        if (n < 0x80)
            return 1;
        if (n < 0x100)
            return 2;
        if (n < 0x10000)
            return 3;
        if (n < 0x100000000LL)
            return 5;
        return 9;
    }
    if (n >= -32)
        return 1;
    if (n >= -0x80)
        return 2;
    if (n >= -0x8000)
        return 3;
    if (n >= -0x80000000LL)
        return 5;
    return 9;
}

/* A msgpack map or array header for ``n`` entries: fix below 16, then 16- and 32-bit counts
   (protocol.codec._header's forms, ormsgpack's and msgpack's). */
static Py_ssize_t container_form(Py_ssize_t n)
{
    if (n < 16)
        return 1;
    if (n < 0x10000)
        return 3;
    return 5;
}

/* len(pack(value)) counted for the plain types (exact dict with str keys, list, str, int within
   64 bits, float, bool, None), or -1: a value it does not count exactly (measure with pack).
   Floats are float64 (9 bytes): pack never writes float32. Never sets an exception. */
static Py_ssize_t msgpack_size(PyObject *value, int depth)
{
    PyTypeObject *kind = Py_TYPE(value);
    if (kind == &PyUnicode_Type) {
        Py_ssize_t n = utf8_length(value);
        return n < 0 ? -1 : str_form(n);
    }
    if (kind == &PyLong_Type) {
        Py_ssize_t n = int_size(value);
        return n ? n : -1;
    }
    if (value == Py_None || kind == &PyBool_Type)
        return 1;
    if (kind == &PyFloat_Type)
        return 9;
    if (depth >= MAX_DEPTH)
        return -1;
    if (kind == &PyList_Type) {
        Py_ssize_t n = PyList_GET_SIZE(value);
        Py_ssize_t total = container_form(n);
        for (Py_ssize_t i = 0; i < n; i++) {
            Py_ssize_t item = msgpack_size(PyList_GET_ITEM(value, i), depth + 1);
            if (item < 0)
                return -1;
            total += item;
        }
        return total;
    }
    if (kind == &PyDict_Type) {
        Py_ssize_t total = container_form(PyDict_GET_SIZE(value));
        Py_ssize_t pos = 0;
        PyObject *key, *item;
        while (PyDict_Next(value, &pos, &key, &item)) {
            if (Py_TYPE(key) != &PyUnicode_Type)
                return -1;
            Py_ssize_t k = utf8_length(key);
            if (k < 0)
                return -1;
            Py_ssize_t v = msgpack_size(item, depth + 1);
            if (v < 0)
                return -1;
            total += str_form(k) + v;
        }
        return total;
    }
    return -1;
}

/* len(pack(value)): counted, or else encoded by pack (which raises what it raises). */
static Py_ssize_t packed_size(PyObject *value)
{
    Py_ssize_t n = msgpack_size(value, 0);
    if (n >= 0)
        return n;
    PyObject *enc = PyObject_CallOneArg(pack_fn, value);
    if (enc == NULL)
        return FAILED;
    n = PyObject_Length(enc);
    Py_DECREF(enc);
    return n < 0 ? FAILED : n;
}

/* ---- Encoding: pack's and canonical's bytes for the plain types ---------------------------- */

/* The forms protocol.codec.pack writes (ormsgpack's and msgpack's, those msgpack_size counts),
   each map's entries in the dict's order, or with ``sort`` in their keys' order (code points:
   the order of their UTF-8 bytes, protocol.codec.canonical's), in one pass into a buffer that
   grows. A value it does not write as the codec would for certain (a subclass, a tuple, bytes,
   a non-string key, an int beyond 64 bits, a lone surrogate, deep nesting) makes the whole
   value NOT_WRITTEN, for the codec's own encoder (which writes it, or raises its own error).
   Tested against pack and canonical (tests/protocol/test_native_encoding.py). */

#define NOT_WRITTEN 1

typedef struct {
    unsigned char *data;
    Py_ssize_t len, cap;
    unsigned char stack[512];
} Out;

static void out_init(Out *o)
{
    o->data = o->stack;
    o->len = 0;
    o->cap = (Py_ssize_t)sizeof(o->stack);
}

static void out_free(Out *o)
{
    if (o->data != o->stack)
        PyMem_Free(o->data);
}

/* Room for ``need`` more bytes: 0, or -1 with MemoryError set. */
static int out_room(Out *o, Py_ssize_t need)
{
    if (o->len + need <= o->cap)
        return 0;
    Py_ssize_t cap = o->cap * 2;
    while (cap < o->len + need)
        cap *= 2;
    unsigned char *data;
    if (o->data == o->stack) {
        data = PyMem_Malloc((size_t)cap);
        if (data != NULL)
            memcpy(data, o->stack, (size_t)o->len);
    }
    else
        data = PyMem_Realloc(o->data, (size_t)cap);
    if (data == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    o->data = data;
    o->cap = cap;
    return 0;
}

/* ``n`` big-endian bytes of ``v`` after the byte ``head`` (room made by the caller). */
static void out_be(Out *o, unsigned char head, uint64_t v, int n)
{
    unsigned char *p = o->data + o->len;
    *p = head;
    for (int i = n; i >= 1; i--) {
        p[i] = (unsigned char)(v & 0xFF);
        v >>= 8;
    }
    o->len += 1 + n;
}

static int out_bytes(Out *o, const void *data, Py_ssize_t n)
{
    if (out_room(o, n) < 0)
        return -1;
    memcpy(o->data + o->len, data, (size_t)n);
    o->len += n;
    return 0;
}

/* A header: ``fix | n`` below ``fix_below``, else the 8-, 16- or 32-bit form from ``wide8``
   (0: none, as for containers). */
static int out_head(Out *o, Py_ssize_t n, unsigned char fix, Py_ssize_t fix_below,
                    unsigned char wide8, unsigned char wide16, unsigned char wide32)
{
    if (out_room(o, 5) < 0)
        return -1;
    if (n < fix_below)
        o->data[o->len++] = (unsigned char)(fix | n);
    else if (wide8 && n < 0x100)
        out_be(o, wide8, (uint64_t)n, 1);
    else if (n < 0x10000)
        out_be(o, wide16, (uint64_t)n, 2);
    else
        out_be(o, wide32, (uint64_t)n, 4);
    return 0;
}

static int write_str(Out *o, PyObject *text)
{
    Py_ssize_t n;
    const char *data;
    if (PyUnicode_IS_ASCII(text)) {
        n = PyUnicode_GET_LENGTH(text);
        data = (const char *)PyUnicode_1BYTE_DATA(text);
    }
    else if ((data = PyUnicode_AsUTF8AndSize(text, &n)) == NULL) {
        PyErr_Clear(); /* (a lone surrogate: the codec's encoder raises its own error) */
        return NOT_WRITTEN;
    }
    if (out_head(o, n, 0xA0, 32, 0xD9, 0xDA, 0xDB) < 0)
        return -1;
    return out_bytes(o, data, n);
}

static int write_int(Out *o, PyObject *value)
{
    long long n;
#if PY_VERSION_HEX < 0x030C0000
    /* (CPython 3.11's ints: a size and 30-bit digits; most are one digit or zero) */
    Py_ssize_t digits = Py_SIZE(value);
    if (digits == 0)
        n = 0;
    else if (digits == 1 || digits == -1)
        n = digits * (long long)((PyLongObject *)value)->ob_digit[0];
    else
#endif
    {
        int overflow = 0;
        n = PyLong_AsLongLongAndOverflow(value, &overflow);
        if (overflow < 0)
            return NOT_WRITTEN;
        if (overflow > 0) { /* from 2**63: a uint64 if below 2**64 */
            unsigned long long u = PyLong_AsUnsignedLongLong(value);
            if (u == (unsigned long long)-1 && PyErr_Occurred()) {
                PyErr_Clear();
                return NOT_WRITTEN;
            }
            if (out_room(o, 9) < 0)
                return -1;
            out_be(o, 0xCF, (uint64_t)u, 8);
            return 0;
        }
    }
    if (out_room(o, 9) < 0)
        return -1;
    if (n >= 0) {
        if (n < 0x80)
            o->data[o->len++] = (unsigned char)n;
        else if (n < 0x100)
            out_be(o, 0xCC, (uint64_t)n, 1);
        else if (n < 0x10000)
            out_be(o, 0xCD, (uint64_t)n, 2);
        else if (n < 0x100000000LL)
            out_be(o, 0xCE, (uint64_t)n, 4);
        else
            out_be(o, 0xCF, (uint64_t)n, 8);
    }
    else if (n >= -32)
        o->data[o->len++] = (unsigned char)(n & 0xFF);
    else if (n >= -0x80)
        out_be(o, 0xD0, (uint64_t)n, 1);
    else if (n >= -0x8000)
        out_be(o, 0xD1, (uint64_t)n, 2);
    else if (n >= -0x80000000LL)
        out_be(o, 0xD2, (uint64_t)n, 4);
    else
        out_be(o, 0xD3, (uint64_t)n, 8);
    return 0;
}

#define SORT_ON_STACK 32
#define INSERTION_MOST 12 /* (more entries: sorted by qsort) */

typedef struct {
    PyObject *key, *value;
} Entry;

/* Whether the str ``a`` sorts before ``b`` by code point (Python's ``a < b``): the bytes of
   two one-byte strings compared as they are, others by PyUnicode_Compare. */
static int key_before(PyObject *a, PyObject *b)
{
    if (PyUnicode_KIND(a) == PyUnicode_1BYTE_KIND && PyUnicode_KIND(b) == PyUnicode_1BYTE_KIND) {
        Py_ssize_t la = PyUnicode_GET_LENGTH(a), lb = PyUnicode_GET_LENGTH(b);
        const Py_UCS1 *x = PyUnicode_1BYTE_DATA(a), *y = PyUnicode_1BYTE_DATA(b);
        Py_ssize_t n = la < lb ? la : lb;
        for (Py_ssize_t i = 0; i < n; i++) {
            if (x[i] != y[i])
                return x[i] < y[i];
        }
        return la < lb;
    }
    return PyUnicode_Compare(a, b) < 0;
}

static int entry_order(const void *a, const void *b)
{
    PyObject *x = ((const Entry *)a)->key, *y = ((const Entry *)b)->key;
    return key_before(x, y) ? -1 : key_before(y, x) ? 1 : 0;
}

static int write_value(Out *o, PyObject *value, int depth, int sort);

static int write_entries(Out *o, Entry *entries, Py_ssize_t count, int depth, int sort)
{
    for (Py_ssize_t i = 0; i < count; i++) {
        int done = write_str(o, entries[i].key);
        if (done == 0)
            done = write_value(o, entries[i].value, depth + 1, sort);
        if (done)
            return done;
    }
    return 0;
}

/* A map's entries, with ``sort`` in their keys' code point order (a dict's keys are
   distinct): the keys all exact str, else NOT_WRITTEN. */
static int write_map(Out *o, PyObject *map, int depth, int sort)
{
    Py_ssize_t n = PyDict_GET_SIZE(map);
    if (out_head(o, n, 0x80, 16, 0, 0xDE, 0xDF) < 0)
        return -1;
    Entry stack[SORT_ON_STACK];
    Entry *entries = stack;
    if (n > SORT_ON_STACK) {
        entries = PyMem_Malloc(sizeof(Entry) * (size_t)n);
        if (entries == NULL) {
            PyErr_NoMemory();
            return -1;
        }
    }
    Py_ssize_t pos = 0, count = 0;
    PyObject *key, *item;
    int done = 0;
    while (PyDict_Next(map, &pos, &key, &item)) {
        if (Py_TYPE(key) != &PyUnicode_Type) {
            done = NOT_WRITTEN;
            break;
        }
        Py_ssize_t at = count++;
        if (sort && n <= INSERTION_MOST) {
            while (at > 0 && key_before(key, entries[at - 1].key)) {
                entries[at] = entries[at - 1];
                at--;
            }
        }
        entries[at].key = key;
        entries[at].value = item;
    }
    if (!done) {
        if (sort && n > INSERTION_MOST)
            qsort(entries, (size_t)count, sizeof(Entry), entry_order);
        done = write_entries(o, entries, count, depth, sort);
    }
    if (entries != stack)
        PyMem_Free(entries);
    return done;
}

/* ``value`` written: 0, NOT_WRITTEN (nothing to raise), or -1 with an exception set. */
static int write_value(Out *o, PyObject *value, int depth, int sort)
{
    PyTypeObject *kind = Py_TYPE(value);
    if (kind == &PyUnicode_Type)
        return write_str(o, value);
    if (kind == &PyLong_Type)
        return write_int(o, value);
    if (value == Py_None || kind == &PyBool_Type) {
        if (out_room(o, 1) < 0)
            return -1;
        o->data[o->len++] = value == Py_None ? 0xC0 : value == Py_True ? 0xC3 : 0xC2;
        return 0;
    }
    if (kind == &PyFloat_Type) { /* (always a float64, as pack writes them) */
        double d = PyFloat_AS_DOUBLE(value);
        uint64_t bits;
        memcpy(&bits, &d, 8);
        if (out_room(o, 9) < 0)
            return -1;
        out_be(o, 0xCB, bits, 8);
        return 0;
    }
    if (depth >= MAX_DEPTH)
        return NOT_WRITTEN;
    if (kind == &PyList_Type) {
        Py_ssize_t n = PyList_GET_SIZE(value);
        if (out_head(o, n, 0x90, 16, 0, 0xDC, 0xDD) < 0)
            return -1;
        for (Py_ssize_t i = 0; i < n; i++) {
            int done = write_value(o, PyList_GET_ITEM(value, i), depth + 1, sort);
            if (done)
                return done;
        }
        return 0;
    }
    if (kind == &PyDict_Type)
        return write_map(o, value, depth, sort);
    return NOT_WRITTEN;
}

/* The bytes of ``value`` as a new bytes object, or None (a new reference) where they are not
   written here (the caller encodes it its own way); NULL with an exception set. */
static PyObject *encoded(PyObject *value, int sort)
{
    Out o;
    out_init(&o);
    int done = write_value(&o, value, 0, sort);
    PyObject *result = NULL;
    if (done == 0)
        result = PyBytes_FromStringAndSize((const char *)o.data, o.len);
    else if (done == NOT_WRITTEN)
        result = Py_NewRef(Py_None);
    out_free(&o);
    return result;
}

/* pack(value): written here where msgpack_size counts it, else by pack itself. */
static PyObject *pack_value(PyObject *value)
{
    PyObject *out = encoded(value, 0);
    if (out == Py_None) {
        Py_DECREF(out);
        return PyObject_CallOneArg(pack_fn, value);
    }
    return out;
}

/* ---- The op encodings: _OpBytes --------------------------------------------------------- */

/* Mirrors _OpBytes.of, returning the length: pack(op), made on the first call only and recorded
   in ``enc`` by id of the op, the op kept alive in ``keep``. */
static Py_ssize_t op_bytes(PyObject *op, PyObject *enc, PyObject *keep)
{
    PyObject *id = PyLong_FromVoidPtr(op);
    if (id == NULL)
        return FAILED;
    PyObject *bytes = PyDict_GetItemWithError(enc, id); /* (borrowed) */
    Py_ssize_t n;
    if (bytes != NULL) {
        n = PyObject_Length(bytes);
    }
    else if (PyErr_Occurred()) {
        n = FAILED;
    }
    else {
        bytes = pack_value(op);
        if (bytes == NULL || PyDict_SetItem(enc, id, bytes) < 0 || PyList_Append(keep, op) < 0)
            n = FAILED;
        else
            n = PyObject_Length(bytes);
        Py_XDECREF(bytes);
    }
    Py_DECREF(id);
    return n < 0 ? FAILED : n;
}

/* Whether ``name`` == "remove", as the Python's ``name == "remove"`` (an op's name is a str:
   compared by value; anything else by its own ==). */
static int is_remove(PyObject *name)
{
    if (name == s_remove)
        return 1;
    if (PyUnicode_CheckExact(name))
        return PyUnicode_Compare(name, s_remove) == 0;
    return PyObject_RichCompareBool(name, s_remove, Py_EQ);
}

/* _OP_SIZES.get(name, 0) for a str ``name``. */
static Py_ssize_t op_head(PyObject *name)
{
    if (name == s_replace || PyUnicode_Compare(name, s_replace) == 0)
        return replace_head;
    if (name == s_add || PyUnicode_Compare(name, s_add) == 0)
        return add_head;
    if (name == s_remove || PyUnicode_Compare(name, s_remove) == 0)
        return remove_head;
    return 0;
}

/* Mirrors _OpBytes.size: len(pack(op)), counted for an op of a str path whose value is a str,
   an int within 64 bits, a bool or None, or that has none (a remove); else of()'s bytes. */
static Py_ssize_t op_size(PyObject *op, PyObject *enc, PyObject *keep)
{
    if (!PyDict_Check(op)) {
        PyErr_SetString(PyExc_TypeError, "an op is a dict");
        return FAILED;
    }
    Py_ssize_t n = PyDict_GET_SIZE(op);
    PyObject *name = PyDict_GetItemWithError(op, s_op);
    if (name == NULL && PyErr_Occurred())
        return FAILED;
    PyObject *path = PyDict_GetItemWithError(op, s_path);
    if (path == NULL && PyErr_Occurred())
        return FAILED;
    if (name == NULL)
        name = Py_None; /* (op.get("op"): None) */
    if (path != NULL && Py_TYPE(path) == &PyUnicode_Type) {
        int fits = n == 3;
        if (!fits && n == 2) {
            fits = is_remove(name);
            if (fits < 0)
                return FAILED;
        }
        if (fits) {
            Py_ssize_t head = Py_TYPE(name) == &PyUnicode_Type ? op_head(name) : 0;
            if (head) {
                if (n == 2) {
                    Py_ssize_t p = str_size(path);
                    return p < 0 ? FAILED : head + p;
                }
                PyObject *value = PyDict_GetItemWithError(op, s_value);
                if (value == NULL && PyErr_Occurred())
                    return FAILED;
                if (value != NULL) {
                    PyTypeObject *kind = Py_TYPE(value);
                    if (kind == &PyUnicode_Type) {
                        Py_ssize_t p = str_size(path);
                        if (p < 0)
                            return FAILED;
                        Py_ssize_t v = str_size(value);
                        return v < 0 ? FAILED : head + p + v;
                    }
                    if (kind == &PyLong_Type) {
                        Py_ssize_t v = int_size(value);
                        if (v) {
                            Py_ssize_t p = str_size(path);
                            return p < 0 ? FAILED : head + p + v;
                        }
                    }
                    else if (kind == &PyBool_Type || value == Py_None) {
                        Py_ssize_t p = str_size(path);
                        return p < 0 ? FAILED : head + p + 1;
                    }
                }
            }
        }
    }
    return op_bytes(op, enc, keep);
}

/* ---- Ops and paths ----------------------------------------------------------------------- */

/* ops.append({"op": name, "path": path, "value": value}) (no "value" if NULL). */
static int push(PyObject *ops, PyObject *name, PyObject *path, PyObject *value)
{
    PyObject *op = PyDict_New();
    if (op == NULL)
        return -1;
    if (PyDict_SetItem(op, s_op, name) < 0 || PyDict_SetItem(op, s_path, path) < 0
        || (value != NULL && PyDict_SetItem(op, s_value, value) < 0)) {
        Py_DECREF(op);
        return -1;
    }
    int done = PyList_Append(ops, op);
    Py_DECREF(op);
    return done;
}

/* Mirrors patch._step: "/" + escape(key) (pointer.escape: "~" -> "~0", then "/" -> "~1"), kept
   in _STEPS (the same dict the Python fills) while it holds fewer than _STEPS_MAX. New ref. */
static PyObject *step(PyObject *key)
{
    if (!PyUnicode_Check(key)) {
        PyErr_Format(PyExc_TypeError, "map keys are str, not %.100s", Py_TYPE(key)->tp_name);
        return NULL;
    }
    PyObject *made = PyDict_GetItemWithError(steps, key);
    if (made != NULL) {
        Py_INCREF(made);
        return made;
    }
    if (PyErr_Occurred())
        return NULL;
    Py_ssize_t n = PyUnicode_GET_LENGTH(key);
    PyObject *escaped;
    if (PyUnicode_FindChar(key, '~', 0, n, 1) >= 0 || PyUnicode_FindChar(key, '/', 0, n, 1) >= 0) {
        PyObject *once = PyUnicode_Replace(key, s_tilde, s_tilde0, -1);
        if (once == NULL)
            return NULL;
        escaped = PyUnicode_Replace(once, s_slash, s_tilde1, -1);
        Py_DECREF(once);
        if (escaped == NULL)
            return NULL;
    }
    else {
        Py_INCREF(key);
        escaped = key;
    }
    made = PyUnicode_Concat(s_slash, escaped);
    Py_DECREF(escaped);
    if (made == NULL)
        return NULL;
    if (PyDict_GET_SIZE(steps) < steps_max && PyDict_SetItem(steps, key, made) < 0) {
        Py_DECREF(made);
        return NULL;
    }
    return made;
}

/* path + _step(key). New ref. */
static PyObject *key_path(PyObject *path, PyObject *key)
{
    PyObject *s = step(key);
    if (s == NULL)
        return NULL;
    PyObject *joined = PyUnicode_Concat(path, s);
    Py_DECREF(s);
    return joined;
}

/* path + _at(i): the first len(_AT) steps made once, f"/{i}" beyond. New ref. */
static PyObject *index_path(PyObject *path, Py_ssize_t i)
{
    if (i < PyTuple_GET_SIZE(at_steps))
        return PyUnicode_Concat(path, PyTuple_GET_ITEM(at_steps, i));
    PyObject *s = PyUnicode_FromFormat("/%zd", i);
    if (s == NULL)
        return NULL;
    PyObject *joined = PyUnicode_Concat(path, s);
    Py_DECREF(s);
    return joined;
}

/* ---- Strict equality ------------------------------------------------------------------- */

/* Mirrors patch._signed: equal floats that still encode differently (0.0 and -0.0). */
static int signed_zero(PyObject *a, PyObject *b)
{
    double x = PyFloat_AS_DOUBLE(a);
    return x == 0.0 && (signbit(x) != 0) != (signbit(PyFloat_AS_DOUBLE(b)) != 0);
}

/* Mirrors patch._strict: values already == have the same type everywhere (1, 1.0 and True
   differ; so do 0.0 and -0.0). 1, 0, or -1 with an exception. */
static int strict(PyObject *a, PyObject *b)
{
    PyTypeObject *kind = Py_TYPE(a);
    if (kind != Py_TYPE(b))
        return 0;
    if (kind == &PyDict_Type) {
        if (Py_EnterRecursiveCall(" in protocol._diffc"))
            return -1;
        Py_ssize_t pos = 0;
        PyObject *key, *value;
        int result = 1;
        while (result == 1 && PyDict_Next(a, &pos, &key, &value)) {
            PyObject *other = PyDict_GetItemWithError(b, key); /* second[key] */
            if (other == NULL) {
                if (!PyErr_Occurred())
                    PyErr_SetObject(PyExc_KeyError, key);
                result = -1;
            }
            else if (value != other) {
                result = strict(value, other);
            }
        }
        Py_LeaveRecursiveCall();
        return result;
    }
    if (kind == &PyList_Type) {
        if (Py_EnterRecursiveCall(" in protocol._diffc"))
            return -1;
        int result = 1;
        for (Py_ssize_t i = 0; result == 1 && i < PyList_GET_SIZE(a); i++) {
            if (i >= PyList_GET_SIZE(b)) {
                PyErr_SetString(PyExc_IndexError, "list index out of range");
                result = -1;
                break;
            }
            PyObject *x = PyList_GET_ITEM(a, i);
            PyObject *y = PyList_GET_ITEM(b, i);
            if (x != y)
                result = strict(x, y);
        }
        Py_LeaveRecursiveCall();
        return result;
    }
    if (kind == &PyFloat_Type)
        return !signed_zero(a, b);
    return 1;
}

/* Mirrors patch._same: ``a is b or (a == b and _strict(a, b))``. */
static int same(PyObject *a, PyObject *b)
{
    if (a == b)
        return 1;
    int equal = PyObject_RichCompareBool(a, b, Py_EQ);
    if (equal <= 0)
        return equal;
    return strict(a, b);
}

/* The scalar test of patch._diff's loops, for two values that are not the same object:
   ``type(a) is not type(b) or a != b or (type(a) is float and _signed(a, b))``. (Py_NE through
   RichCompareBool: its shortcut for one object never applies, the callers skip those.) */
static int changed(PyObject *a, PyObject *b)
{
    if (Py_TYPE(a) != Py_TYPE(b))
        return 1;
    int differ = PyObject_RichCompareBool(a, b, Py_NE);
    if (differ != 0)
        return differ;
    return Py_TYPE(a) == &PyFloat_Type && signed_zero(a, b);
}

/* ---- The size rule --------------------------------------------------------------------- */

/* sizes.get(id(value)): the size known by the caller, NO_SIZE, or FAILED. */
static Py_ssize_t sizes_get(PyObject *sizes, PyObject *value)
{
    if (PyDict_GET_SIZE(sizes) == 0)
        return NO_SIZE;
    PyObject *id = PyLong_FromVoidPtr(value);
    if (id == NULL)
        return FAILED;
    PyObject *size = PyDict_GetItemWithError(sizes, id);
    Py_DECREF(id);
    if (size == NULL)
        return PyErr_Occurred() ? FAILED : NO_SIZE;
    Py_ssize_t n = PyLong_AsSsize_t(size);
    if (n < 0) {
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_ValueError, "a negative size");
        return FAILED;
    }
    return n;
}

/* Mirrors patch._collapse over a list of op dicts (tree.py's: the ops of a map or list of trees
   at ``path``): replace ops[start:] by one replace of the new value, made by calling ``make``
   only then, when that encodes to strictly fewer bytes. ``size``: the new value's encoded
   size. The ops are weighed in order and the weighing stops at the first that passes the
   budget, as in the Python: the encodings recorded in ``enc`` are those of the same ops. */
static int collapse_list(PyObject *ops, Py_ssize_t start, PyObject *path, Py_ssize_t size,
                         PyObject *make, PyObject *enc, PyObject *keep)
{
    if (PyList_GET_SIZE(ops) - start < 2)
        return 0;
    Py_ssize_t path_size = str_size(path); /* len(pack(path)) */
    if (path_size < 0)
        return -1;
    Py_ssize_t budget = replace_overhead + path_size + size;
    Py_ssize_t total = 0;
    for (Py_ssize_t i = start; i < PyList_GET_SIZE(ops); i++) {
        PyObject *op = PyList_GET_ITEM(ops, i);
        Py_INCREF(op);
        Py_ssize_t n = op_size(op, enc, keep);
        Py_DECREF(op);
        if (n < 0)
            return -1;
        total += n;
        if (total > budget) {
            /* (the Python pops them one by one: the same list after) */
            if (PyList_SetSlice(ops, start, PyList_GET_SIZE(ops), NULL) < 0)
                return -1;
            PyObject *whole = PyObject_CallNoArgs(make);
            if (whole == NULL)
                return -1;
            int done = push(ops, s_replace, path, whole);
            Py_DECREF(whole);
            return done;
        }
    }
    return 0;
}

/* ---- The ops of one diff, made lazily ---------------------------------------------------- */

/* An op of the diff under way (diff, diff_child). The size rule drops most of the ops it
   weighs (a container's changes, replaced by the container), so an op is held first as its
   parts: its name, its path as its parent's path and a step (a map key's step, a list index,
   or none: the parent's path itself), its value. Its dict and path string are made when it is
   weighed by encoding (``_OpBytes.of`` records the op by id: that very dict is the one put in
   the ops if it survives) or, for those that survive, when the call ends and they are
   appended to ``ops`` in order. Exact: the dict made holds the same keys in the same order,
   path and value whenever it is made; an op weighed without encoding is counted from the same
   parts (a path's UTF-8 bytes are its parent's and its step's); and dropped ops that were never
   encoded leave nothing behind in the Python either. */
typedef struct {
    PyObject *name;  /* s_replace, s_add or s_remove (static) */
    PyObject *base;  /* the parent's path (strong) */
    PyObject *step;  /* the step after it (strong), or NULL: ``index``'s, none if it is -1 */
    Py_ssize_t index;
    PyObject *value; /* strong, or NULL (a remove) */
    PyObject *op;    /* the dict once made (strong), else NULL */
} Pending;

typedef struct {
    Pending *items;
    Py_ssize_t n, cap;
} Ops;

/* Append an op (references taken to ``base``, ``step`` and ``value``). */
static int ops_add(Ops *ops, PyObject *name, PyObject *base, PyObject *step, Py_ssize_t index,
                   PyObject *value)
{
    if (ops->n == ops->cap) {
        Py_ssize_t cap = ops->cap ? 2 * ops->cap : 16;
        Pending *grown = PyMem_Realloc(ops->items, cap * sizeof(Pending));
        if (grown == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        ops->items = grown;
        ops->cap = cap;
    }
    Pending *p = &ops->items[ops->n++];
    p->name = name;
    p->base = Py_NewRef(base);
    p->step = Py_XNewRef(step);
    p->index = index;
    p->value = Py_XNewRef(value);
    p->op = NULL;
    return 0;
}

/* Drop the ops from ``start`` on. */
static void ops_truncate(Ops *ops, Py_ssize_t start)
{
    while (ops->n > start) {
        Pending *p = &ops->items[--ops->n];
        Py_DECREF(p->base);
        Py_XDECREF(p->step);
        Py_XDECREF(p->value);
        Py_XDECREF(p->op);
    }
}

static void ops_free(Ops *ops)
{
    ops_truncate(ops, 0);
    PyMem_Free(ops->items);
    ops->items = NULL;
    ops->cap = 0;
}

/* The op's dict, made on the first call (borrowed: the op holds it). */
static PyObject *pending_op(Pending *p)
{
    if (p->op != NULL)
        return p->op;
    PyObject *path;
    if (p->step != NULL)
        path = PyUnicode_Concat(p->base, p->step);
    else if (p->index >= 0)
        path = index_path(p->base, p->index);
    else
        path = Py_NewRef(p->base);
    if (path == NULL)
        return NULL;
    PyObject *op = PyDict_New();
    if (op != NULL
        && (PyDict_SetItem(op, s_op, p->name) < 0 || PyDict_SetItem(op, s_path, path) < 0
            || (p->value != NULL && PyDict_SetItem(op, s_value, p->value) < 0))) {
        Py_CLEAR(op);
    }
    Py_DECREF(path);
    p->op = op;
    return op;
}

/* The UTF-8 bytes of the op's path, from its parts; -1 for a lone surrogate (the path is then
   made and sized as the Python sizes it, which raises). */
static Py_ssize_t pending_path_bytes(Pending *p)
{
    Py_ssize_t n = utf8_length(p->base);
    if (n < 0)
        return -1;
    if (p->step != NULL) {
        Py_ssize_t step = utf8_length(p->step);
        return step < 0 ? -1 : n + step;
    }
    if (p->index >= 0) { /* "/" and the decimal digits (_AT's steps, f"/{i}" beyond) */
        n += 2;
        for (Py_ssize_t i = p->index; i >= 10; i /= 10)
            n++;
    }
    return n;
}

/* len(pack(path)) of the op. */
static Py_ssize_t pending_path_size(Pending *p)
{
    Py_ssize_t n = pending_path_bytes(p);
    if (n >= 0)
        return str_form(n);
    PyObject *op = pending_op(p);
    if (op == NULL)
        return FAILED;
    PyObject *path = PyDict_GetItemWithError(op, s_path);
    return path == NULL ? FAILED : str_size(path);
}

/* Mirrors _OpBytes.size for an op of this diff (an exact str path; a name of _OP_SIZES; a
   value, but for a remove): counted for a str, an int within 64 bits, a bool or None or no
   value, in the order op_size counts them; else the bytes of of(op), the op's dict made. */
static Py_ssize_t pending_size(Pending *p, PyObject *enc, PyObject *keep)
{
    Py_ssize_t head = op_head(p->name);
    PyObject *value = p->value;
    if (value == NULL) {
        Py_ssize_t path = pending_path_size(p);
        return path < 0 ? FAILED : head + path;
    }
    PyTypeObject *kind = Py_TYPE(value);
    Py_ssize_t size = 0;
    if (kind == &PyUnicode_Type) {
        Py_ssize_t path = pending_path_size(p);
        if (path < 0)
            return FAILED;
        size = str_size(value);
        return size < 0 ? FAILED : head + path + size;
    }
    if (kind == &PyLong_Type)
        size = int_size(value);
    else if (kind == &PyBool_Type || value == Py_None)
        size = 1;
    if (size) {
        Py_ssize_t path = pending_path_size(p);
        return path < 0 ? FAILED : head + path + size;
    }
    PyObject *op = pending_op(p);
    return op == NULL ? FAILED : op_bytes(op, enc, keep);
}

/* Append the ops to the list ``into``, in order, each op's dict made if not yet. */
static int ops_flush(Ops *ops, PyObject *into)
{
    for (Py_ssize_t i = 0; i < ops->n; i++) {
        PyObject *op = pending_op(&ops->items[i]);
        if (op == NULL || PyList_Append(into, op) < 0)
            return -1;
    }
    return 0;
}

/* Mirrors patch._collapse over the ops of this diff: replace ops[start:] (the changes of one
   container at ``path``) by one replace of ``value``, its new value, when that encodes to
   strictly fewer bytes. ``size``: its encoded size. The ops are weighed in order and the
   weighing stops at the first that passes the budget, as in the Python: the ops encoded on
   the way (recorded in ``enc``) are the same. */
static int collapse(Ops *ops, Py_ssize_t start, PyObject *path, Py_ssize_t size,
                    PyObject *value, PyObject *enc, PyObject *keep)
{
    if (ops->n - start < 2)
        return 0;
    Py_ssize_t path_size = str_size(path); /* len(pack(path)) */
    if (path_size < 0)
        return -1;
    Py_ssize_t budget = replace_overhead + path_size + size;
    Py_ssize_t total = 0;
    for (Py_ssize_t i = start; i < ops->n; i++) {
        Py_ssize_t n = pending_size(&ops->items[i], enc, keep);
        if (n < 0)
            return -1;
        total += n;
        if (total > budget) {
            ops_truncate(ops, start);
            return ops_add(ops, s_replace, path, NULL, -1, value);
        }
    }
    return 0;
}

/* Mirrors patch._replaces_list: whether the size rule replaces a list of ``old_len`` items by
   ``new`` whole, known from the lengths (0: diff them). ``size``: new's encoded size or
   NO_SIZE (the Python's None: counted here, only when needed). 1, 0 or -1. */
static int replaces_list(Py_ssize_t old_len, PyObject *new, PyObject *path, Py_ssize_t size)
{
    Py_ssize_t n = PyList_GET_SIZE(new);
    if (old_len + n < 2)
        return 0;
    if (old_len == 0 || n == 0)
        return 1;
    Py_ssize_t extra = old_len - n;
    if (extra < 2)
        return 0;
    if (size == NO_SIZE) {
        size = packed_size(new);
        if (size < 0)
            return -1;
    }
    Py_ssize_t path_size = str_size(path);
    if (path_size < 0)
        return -1;
    return extra * (remove_least + PyUnicode_GET_LENGTH(path))
           > replace_overhead + path_size + size;
}

static int diff(PyObject *old, PyObject *new, PyObject *path, Ops *ops, PyObject *sizes,
                PyObject *enc, PyObject *keep);

/* Mirrors patch._diff_child: two containers below the top; one replace instead if smaller.
   (The Python looks ``sizes.get(id(new))`` up before _replaces_list needs it: no side effect,
   so it is looked up here only when needed.) */
static int diff_child(PyObject *old, PyObject *new, PyObject *path, Ops *ops, PyObject *sizes,
                      PyObject *enc, PyObject *keep)
{
    if (Py_TYPE(old) == &PyList_Type && Py_TYPE(new) == &PyList_Type) {
        Py_ssize_t old_len = PyList_GET_SIZE(old), n = PyList_GET_SIZE(new);
        Py_ssize_t known = NO_SIZE;
        if (old_len + n >= 2 && old_len != 0 && n != 0 && old_len - n >= 2) {
            known = sizes_get(sizes, new);
            if (known == FAILED)
                return -1;
        }
        int whole = replaces_list(old_len, new, path, known);
        if (whole < 0)
            return -1;
        if (whole)
            return ops_add(ops, s_replace, path, NULL, -1, new);
    }
    Py_ssize_t start = ops->n;
    if (diff(old, new, path, ops, sizes, enc, keep) < 0)
        return -1;
    if (ops->n - start < 2)
        return 0;
    Py_ssize_t known = sizes_get(sizes, new);
    if (known == FAILED)
        return -1;
    if (known == NO_SIZE) { /* not tracked by the caller: counted */
        known = packed_size(new);
        if (known < 0)
            return -1;
    }
    return collapse(ops, start, path, known, new, enc, keep);
}

/* path + _step(key) if ``key`` is given, else path + _at(i): made only when an op needs it,
   as in the Python (most entries diffed are equal, and a new step would be cached). */
static PyObject *entry_path(PyObject *path, PyObject *key, Py_ssize_t i)
{
    return key != NULL ? key_path(path, key) : index_path(path, i);
}

/* An op on a map's ``key`` (its path: path + _step(key)) or, key NULL, on a list's item ``i``
   (path + _at(i)). */
static int add_entry(Ops *ops, PyObject *name, PyObject *path, PyObject *key, Py_ssize_t i,
                     PyObject *value)
{
    if (key == NULL)
        return ops_add(ops, name, path, NULL, i, value);
    PyObject *s = step(key);
    if (s == NULL)
        return -1;
    int done = ops_add(ops, name, path, s, -1, value);
    Py_DECREF(s);
    return done;
}

/* One entry of a map (``key``) or an item of a list (``i``), ``value`` before and ``other``
   after (not the same object): the body of patch._diff's loops. */
static int diff_entry(PyObject *value, PyObject *other, PyObject *path, PyObject *key,
                      Py_ssize_t i, Ops *ops, PyObject *sizes, PyObject *enc, PyObject *keep)
{
    PyTypeObject *vt = Py_TYPE(value);
    int result;
    if (vt == Py_TYPE(other) && (vt == &PyDict_Type || vt == &PyList_Type)) {
        result = same(value, other);
        if (result != 0)
            return result < 0 ? -1 : 0;
        PyObject *at = entry_path(path, key, i);
        if (at == NULL)
            return -1;
        result = diff_child(value, other, at, ops, sizes, enc, keep);
        Py_DECREF(at);
        return result;
    }
    result = changed(value, other);
    if (result <= 0)
        return result;
    return add_entry(ops, s_replace, path, key, i, other);
}

/* Mirrors patch._diff: the ops turning ``old`` into ``new`` at ``path``. Borrowed items are held
   (a new reference) while they are worked on: the documents are never edited, but the calls
   to pack and to == run other code. */
static int diff(PyObject *old, PyObject *new, PyObject *path, Ops *ops, PyObject *sizes,
                PyObject *enc, PyObject *keep)
{
    if (old == new)
        return 0;
    PyTypeObject *kind = Py_TYPE(old);
    if (kind != Py_TYPE(new))
        return ops_add(ops, s_replace, path, NULL, -1, new);
    if (kind == &PyDict_Type) {
        if (Py_EnterRecursiveCall(" in protocol._diffc"))
            return -1;
        int result = 0, gone = 0;
        Py_ssize_t pos = 0;
        PyObject *key, *value;
        while (result == 0 && PyDict_Next(old, &pos, &key, &value)) {
            PyObject *other = PyDict_GetItemWithError(new, key);
            if (other == NULL && PyErr_Occurred()) {
                result = -1;
                break;
            }
            if (other == value)
                continue;
            Py_INCREF(key);
            Py_INCREF(value);
            if (other == NULL) {
                result = add_entry(ops, s_remove, path, key, 0, NULL);
                gone = 1;
            }
            else {
                Py_INCREF(other);
                result = diff_entry(value, other, path, key, 0, ops, sizes, enc, keep);
                Py_DECREF(other);
            }
            Py_DECREF(value);
            Py_DECREF(key);
        }
        /* (else the same keys: none added) */
        if (result == 0 && (gone || PyDict_GET_SIZE(new) != PyDict_GET_SIZE(old))) {
            pos = 0;
            while (result == 0 && PyDict_Next(new, &pos, &key, &value)) {
                int had = PyDict_Contains(old, key);
                if (had < 0) {
                    result = -1;
                    break;
                }
                if (had)
                    continue;
                result = add_entry(ops, s_add, path, key, 0, value);
            }
        }
        Py_LeaveRecursiveCall();
        return result;
    }
    if (kind == &PyList_Type) {
        if (Py_EnterRecursiveCall(" in protocol._diffc"))
            return -1;
        Py_ssize_t n = PyList_GET_SIZE(old), m = PyList_GET_SIZE(new);
        Py_ssize_t common = n < m ? n : m;
        int result = 0;
        for (Py_ssize_t i = 0; result == 0 && i < common; i++) {
            if (i >= PyList_GET_SIZE(old) || i >= PyList_GET_SIZE(new)) {
                PyErr_SetString(PyExc_IndexError, "list index out of range");
                result = -1;
                break;
            }
            PyObject *a = PyList_GET_ITEM(old, i);
            PyObject *b = PyList_GET_ITEM(new, i);
            if (a == b)
                continue;
            Py_INCREF(a);
            Py_INCREF(b);
            result = diff_entry(a, b, path, NULL, i, ops, sizes, enc, keep);
            Py_DECREF(b);
            Py_DECREF(a);
        }
        for (Py_ssize_t i = n - 1; result == 0 && i >= common; i--)
            result = ops_add(ops, s_remove, path, NULL, i, NULL);
        for (Py_ssize_t i = common; result == 0 && i < PyList_GET_SIZE(new); i++)
            result = ops_add(ops, s_add, path, NULL, i, PyList_GET_ITEM(new, i));
        Py_LeaveRecursiveCall();
        return result;
    }
    int differ = PyObject_RichCompareBool(old, new, Py_NE); /* (old is not new: no shortcut) */
    if (differ < 0)
        return -1;
    if (differ || (kind == &PyFloat_Type && signed_zero(old, new)))
        return ops_add(ops, s_replace, path, NULL, -1, new);
    return 0;
}

/* ---- The module's functions -------------------------------------------------------------- */

/* Checks the arguments shared by diff and diff_child: (old, new, path: str, ops: list,
   sizes: dict, enc: dict, keep: list). */
static int diff_args(PyObject *const *args, Py_ssize_t nargs, const char *name)
{
    if (!ready())
        return 0;
    if (nargs != 7) {
        PyErr_Format(PyExc_TypeError, "%s takes 7 arguments (%zd given)", name, nargs);
        return 0;
    }
    if (!PyUnicode_Check(args[2]) || !PyList_CheckExact(args[3]) || !PyDict_Check(args[4])
        || !PyDict_CheckExact(args[5]) || !PyList_CheckExact(args[6])) {
        PyErr_Format(PyExc_TypeError,
                     "%s(old, new, path: str, ops: list, sizes: dict, enc: dict, keep: list)",
                     name);
        return 0;
    }
    return 1;
}

static PyObject *py_diff(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (!diff_args(args, nargs, "diff"))
        return NULL;
    Ops ops = {NULL, 0, 0};
    int done = diff(args[0], args[1], args[2], &ops, args[4], args[5], args[6]);
    if (done == 0)
        done = ops_flush(&ops, args[3]);
    ops_free(&ops);
    if (done < 0)
        return NULL;
    Py_RETURN_NONE;
}

static PyObject *py_diff_child(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (!diff_args(args, nargs, "diff_child"))
        return NULL;
    Ops ops = {NULL, 0, 0};
    int done = diff_child(args[0], args[1], args[2], &ops, args[4], args[5], args[6]);
    if (done == 0)
        done = ops_flush(&ops, args[3]);
    ops_free(&ops);
    if (done < 0)
        return NULL;
    Py_RETURN_NONE;
}

/* collapse(ops, start, path, size, value, enc, keep): patch._collapse, ``value`` a callable. */
static PyObject *py_collapse(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (!ready())
        return NULL;
    if (nargs != 7 || !PyList_CheckExact(args[0]) || !PyLong_Check(args[1])
        || !PyUnicode_Check(args[2]) || !PyLong_Check(args[3]) || !PyDict_CheckExact(args[5])
        || !PyList_CheckExact(args[6])) {
        PyErr_SetString(PyExc_TypeError,
                        "collapse(ops: list, start: int, path: str, size: int, value: callable, "
                        "enc: dict, keep: list)");
        return NULL;
    }
    Py_ssize_t start = PyLong_AsSsize_t(args[1]);
    Py_ssize_t size = PyLong_AsSsize_t(args[3]);
    if ((start == -1 || size == -1) && PyErr_Occurred())
        return NULL;
    if (start < 0) {
        PyErr_SetString(PyExc_ValueError, "a negative start");
        return NULL;
    }
    if (collapse_list(args[0], start, args[2], size, args[4], args[5], args[6]) < 0)
        return NULL;
    Py_RETURN_NONE;
}

/* replaces_list(old_len, new, path, size=None): patch._replaces_list. */
static PyObject *py_replaces_list(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (!ready())
        return NULL;
    if ((nargs != 3 && nargs != 4) || !PyLong_Check(args[0]) || !PyList_Check(args[1])
        || !PyUnicode_Check(args[2]) || (nargs == 4 && args[3] != Py_None && !PyLong_Check(args[3]))) {
        PyErr_SetString(PyExc_TypeError,
                        "replaces_list(old_len: int, new: list, path: str, size: int | None)");
        return NULL;
    }
    Py_ssize_t old_len = PyLong_AsSsize_t(args[0]);
    if (old_len == -1 && PyErr_Occurred())
        return NULL;
    Py_ssize_t size = NO_SIZE;
    if (nargs == 4 && args[3] != Py_None) {
        size = PyLong_AsSsize_t(args[3]);
        if (size == -1 && PyErr_Occurred())
            return NULL;
    }
    int whole = replaces_list(old_len, args[1], args[2], size);
    if (whole < 0)
        return NULL;
    return PyBool_FromLong(whole);
}

/* op_size(op, enc, keep): _OpBytes.size. */
static PyObject *py_op_size(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (!ready())
        return NULL;
    if (nargs != 3 || !PyDict_CheckExact(args[1]) || !PyList_CheckExact(args[2])) {
        PyErr_SetString(PyExc_TypeError, "op_size(op: dict, enc: dict, keep: list)");
        return NULL;
    }
    Py_ssize_t n = op_size(args[0], args[1], args[2]);
    return n < 0 ? NULL : PyLong_FromSsize_t(n);
}

/* packed_size(value): len(pack(value)), counted where it can be. */
static PyObject *py_packed_size(PyObject *module, PyObject *value)
{
    if (!ready())
        return NULL;
    Py_ssize_t n = packed_size(value);
    return n < 0 ? NULL : PyLong_FromSsize_t(n);
}

/* counted_size(value): msgpack_size's own answer, or None where it hands over to pack. */
static PyObject *py_counted_size(PyObject *module, PyObject *value)
{
    Py_ssize_t n = msgpack_size(value, 0);
    if (n < 0)
        Py_RETURN_NONE;
    return PyLong_FromSsize_t(n);
}

static int set_size(PyObject *value, Py_ssize_t *into)
{
    Py_ssize_t n = PyLong_AsSsize_t(value);
    if (n == -1 && PyErr_Occurred())
        return 0;
    *into = n;
    return 1;
}

/* setup(pack, steps, steps_max, at, replace_head, add_head, remove_head, replace_overhead,
   remove_least): what patch.py holds (see the globals above). */
static PyObject *py_setup(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 9 || !PyCallable_Check(args[0]) || !PyDict_CheckExact(args[1])
        || !PyTuple_CheckExact(args[3])) {
        PyErr_SetString(PyExc_TypeError,
                        "setup(pack, steps: dict, steps_max: int, at: tuple, replace_head, "
                        "add_head, remove_head, replace_overhead, remove_least)");
        return NULL;
    }
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(args[3]); i++) {
        if (!PyUnicode_Check(PyTuple_GET_ITEM(args[3], i))) {
            PyErr_SetString(PyExc_TypeError, "setup: at holds str");
            return NULL;
        }
    }
    Py_ssize_t sm, rh, ah, mh, ro, rl;
    if (!set_size(args[2], &sm) || !set_size(args[4], &rh) || !set_size(args[5], &ah)
        || !set_size(args[6], &mh) || !set_size(args[7], &ro) || !set_size(args[8], &rl))
        return NULL;
    Py_XSETREF(pack_fn, Py_NewRef(args[0]));
    Py_XSETREF(steps, Py_NewRef(args[1]));
    Py_XSETREF(at_steps, Py_NewRef(args[3]));
    steps_max = sm;
    replace_head = rh;
    add_head = ah;
    remove_head = mh;
    replace_overhead = ro;
    remove_least = rl;
    Py_RETURN_NONE;
}

/* ---- Decoding: the codec's bytes back to values ------------------------------------------- */

/* protocol.codec.unpack's values (ormsgpack's: dict, list, str, int, float, bool, None) from
   msgpack's nil, bools, ints, floats, strs, arrays and maps of str keys: what the server's own
   canonical encodings hold (a view's last bytes, decoded to diff them). Anything else (bin,
   ext, a key that is not a str, invalid UTF-8, bytes left over or missing, deep nesting) is
   NOT decoded here: the caller's ``default`` comes back, for the codec to decode or refuse.
   Short ASCII map keys come from a small cache of str objects (their hashes kept), so a
   view's keys are not made and hashed again at every decoding. Tested against the codec
   (tests/protocol/test_native_encoding.py). */

typedef struct {
    const unsigned char *p, *end;
} In;

#define KEY_SLOTS 512
#define KEY_LONGEST 32
static PyObject *key_cache[KEY_SLOTS]; /* (strong references, for the life of the process) */

static int in_has(In *in, Py_ssize_t n)
{
    return in->end - in->p >= n;
}

static uint64_t in_be(In *in, int n)
{
    uint64_t v = 0;
    for (int i = 0; i < n; i++)
        v = (v << 8) | in->p[i];
    in->p += n;
    return v;
}

/* A str of ``n`` UTF-8 bytes at ``in``, or NULL (invalid UTF-8: quietly, the codec decides). */
static PyObject *read_text(In *in, Py_ssize_t n, int key)
{
    const unsigned char *data = in->p;
    in->p += n;
    if (key && n <= KEY_LONGEST) {
        uint32_t h = 2166136261u;
        int ascii = 1;
        for (Py_ssize_t i = 0; i < n; i++) {
            h = (h ^ data[i]) * 16777619u;
            ascii &= data[i] < 0x80;
        }
        if (ascii) {
            PyObject **slot = &key_cache[(h ^ (uint32_t)n) & (KEY_SLOTS - 1)];
            PyObject *known = *slot;
            if (known != NULL && PyUnicode_GET_LENGTH(known) == n
                && memcmp(PyUnicode_1BYTE_DATA(known), data, (size_t)n) == 0)
                return Py_NewRef(known);
            PyObject *text = PyUnicode_New(n, 127);
            if (text == NULL)
                return NULL;
            memcpy(PyUnicode_1BYTE_DATA(text), data, (size_t)n);
            Py_XSETREF(*slot, Py_NewRef(text));
            return text;
        }
    }
    PyObject *text = PyUnicode_DecodeUTF8((const char *)data, n, NULL);
    if (text == NULL && PyErr_ExceptionMatches(PyExc_UnicodeDecodeError))
        PyErr_Clear();
    return text;
}

/* The value at ``in``: a new reference, or NULL: with an exception set (memory), or quietly
   (not decoded here). */
static PyObject *read_value(In *in, int depth)
{
    if (!in_has(in, 1))
        return NULL;
    unsigned char b = *in->p++;
    if (b <= 0x7F)
        return PyLong_FromLong(b);
    if (b >= 0xE0)
        return PyLong_FromLong((long)(signed char)b);
    if (b >= 0xA0 && b <= 0xBF) {
        Py_ssize_t n = b & 0x1F;
        return in_has(in, n) ? read_text(in, n, 0) : NULL;
    }
    Py_ssize_t items = -1, entries = -1;
    if (b >= 0x80 && b <= 0x8F)
        entries = b & 0x0F;
    else if (b >= 0x90 && b <= 0x9F)
        items = b & 0x0F;
    else {
        switch (b) {
        case 0xC0:
            Py_RETURN_NONE;
        case 0xC2:
            Py_RETURN_FALSE;
        case 0xC3:
            Py_RETURN_TRUE;
        case 0xCC:
        case 0xCD:
        case 0xCE: {
            int n = 1 << (b - 0xCC);
            return in_has(in, n) ? PyLong_FromUnsignedLongLong(in_be(in, n)) : NULL;
        }
        case 0xCF:
            return in_has(in, 8) ? PyLong_FromUnsignedLongLong(in_be(in, 8)) : NULL;
        case 0xD0:
            return in_has(in, 1) ? PyLong_FromLong((int8_t)in_be(in, 1)) : NULL;
        case 0xD1:
            return in_has(in, 2) ? PyLong_FromLong((int16_t)in_be(in, 2)) : NULL;
        case 0xD2:
            return in_has(in, 4) ? PyLong_FromLong((int32_t)in_be(in, 4)) : NULL;
        case 0xD3:
            return in_has(in, 8) ? PyLong_FromLongLong((int64_t)in_be(in, 8)) : NULL;
        case 0xCA: {
            if (!in_has(in, 4))
                return NULL;
            uint32_t bits = (uint32_t)in_be(in, 4);
            float f;
            memcpy(&f, &bits, 4);
            return PyFloat_FromDouble((double)f);
        }
        case 0xCB: {
            if (!in_has(in, 8))
                return NULL;
            uint64_t bits = in_be(in, 8);
            double d;
            memcpy(&d, &bits, 8);
            return PyFloat_FromDouble(d);
        }
        case 0xD9:
        case 0xDA:
        case 0xDB: {
            int w = b == 0xD9 ? 1 : b == 0xDA ? 2 : 4;
            if (!in_has(in, w))
                return NULL;
            Py_ssize_t n = (Py_ssize_t)in_be(in, w);
            return in_has(in, n) ? read_text(in, n, 0) : NULL;
        }
        case 0xDC:
        case 0xDD: {
            int w = b == 0xDC ? 2 : 4;
            if (!in_has(in, w))
                return NULL;
            items = (Py_ssize_t)in_be(in, w);
            break;
        }
        case 0xDE:
        case 0xDF: {
            int w = b == 0xDE ? 2 : 4;
            if (!in_has(in, w))
                return NULL;
            entries = (Py_ssize_t)in_be(in, w);
            break;
        }
        default: /* (bin, ext, never-used) */
            return NULL;
        }
    }
    if (depth >= MAX_DEPTH)
        return NULL;
    if (items >= 0) {
        if (!in_has(in, items)) /* (each item is a byte at least) */
            return NULL;
        PyObject *list = PyList_New(items);
        if (list == NULL)
            return NULL;
        for (Py_ssize_t i = 0; i < items; i++) {
            PyObject *item = read_value(in, depth + 1);
            if (item == NULL) {
                Py_DECREF(list);
                return NULL;
            }
            PyList_SET_ITEM(list, i, item);
        }
        return list;
    }
    if (!in_has(in, 2 * entries))
        return NULL;
    PyObject *map = _PyDict_NewPresized(entries);
    if (map == NULL)
        return NULL;
    for (Py_ssize_t i = 0; i < entries; i++) {
        PyObject *key = NULL;
        if (in_has(in, 1)) {
            unsigned char k = *in->p++;
            Py_ssize_t n = -1;
            if (k >= 0xA0 && k <= 0xBF)
                n = k & 0x1F;
            else if (k == 0xD9 && in_has(in, 1))
                n = (Py_ssize_t)in_be(in, 1);
            else if (k == 0xDA && in_has(in, 2))
                n = (Py_ssize_t)in_be(in, 2);
            else if (k == 0xDB && in_has(in, 4))
                n = (Py_ssize_t)in_be(in, 4);
            if (n >= 0 && in_has(in, n))
                key = read_text(in, n, 1);
        }
        PyObject *item = key == NULL ? NULL : read_value(in, depth + 1);
        if (item == NULL || PyDict_SetItem(map, key, item) < 0) {
            Py_XDECREF(key);
            Py_XDECREF(item);
            Py_DECREF(map);
            return NULL;
        }
        Py_DECREF(key);
        Py_DECREF(item);
    }
    return map;
}

/* unpack(data, default): protocol.codec.unpack's value of ``data``, or ``default`` where it is
   not decoded here (see above). */
static PyObject *py_unpack(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "unpack(data: bytes, default)");
        return NULL;
    }
    if (!PyBytes_CheckExact(args[0]))
        return Py_NewRef(args[1]);
    In in = {(const unsigned char *)PyBytes_AS_STRING(args[0]), NULL};
    in.end = in.p + PyBytes_GET_SIZE(args[0]);
    PyObject *value = read_value(&in, 0);
    if (value == NULL)
        return PyErr_Occurred() ? NULL : Py_NewRef(args[1]);
    if (in.p != in.end) { /* (bytes left over) */
        Py_DECREF(value);
        return Py_NewRef(args[1]);
    }
    return value;
}

/* pack(value): protocol.codec.pack's bytes (written here for the plain types, see put_value;
   else pack's own). */
static PyObject *py_pack(PyObject *module, PyObject *value)
{
    if (!ready())
        return NULL;
    return pack_value(value);
}

/* plain(value): protocol.codec.pack's bytes for the plain types, or None: a value this does not
   write, for pack to encode (pack's own first try: no setup needed, and no call back into it). */
static PyObject *py_plain(PyObject *module, PyObject *value)
{
    return encoded(value, 0);
}

/* canonical(value): protocol.codec.canonical's bytes for the plain types (its maps' keys
   sorted), or None: a value this does not write (a tuple, a subclass, a non-string key, an int
   beyond 64 bits, deep nesting...), for codec.canonical to encode. */
static PyObject *py_canonical(PyObject *module, PyObject *value)
{
    return encoded(value, 1);
}

/* join_ops(ops, enc): _OpBytes.join: the ops' encodings one after the other, each the one
   recorded in ``enc`` (by id of the op) or else pack's (written here where it can be). */
static PyObject *py_join_ops(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 2 || !PyList_CheckExact(args[0]) || !PyDict_CheckExact(args[1])) {
        PyErr_SetString(PyExc_TypeError, "join_ops(ops: list, enc: dict)");
        return NULL;
    }
    if (!ready())
        return NULL;
    PyObject *ops = args[0], *enc = args[1];
    Out o;
    out_init(&o);
    PyObject *out = NULL;
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(ops); i++) {
        PyObject *op = PyList_GET_ITEM(ops, i);
        PyObject *id = PyLong_FromVoidPtr(op);
        if (id == NULL)
            goto end;
        PyObject *bytes = PyDict_GetItemWithError(enc, id); /* (borrowed) */
        Py_DECREF(id);
        if (bytes == NULL) {
            if (PyErr_Occurred())
                goto end;
            Py_ssize_t mark = o.len;
            int done = write_value(&o, op, 0, 0);
            if (done < 0)
                goto end;
            if (done == 0)
                continue;
            o.len = mark; /* (NOT_WRITTEN: what was written of it dropped, pack's bytes instead) */
            bytes = PyObject_CallOneArg(pack_fn, op);
            if (bytes == NULL)
                goto end;
        }
        else
            Py_INCREF(bytes);
        int failed = !PyBytes_CheckExact(bytes);
        if (failed)
            PyErr_SetString(PyExc_TypeError, "join_ops: an op's encoding is bytes");
        else
            failed = out_bytes(&o, PyBytes_AS_STRING(bytes), PyBytes_GET_SIZE(bytes)) < 0;
        Py_DECREF(bytes);
        if (failed)
            goto end;
    }
    out = PyBytes_FromStringAndSize((const char *)o.data, o.len);
end:
    out_free(&o);
    return out;
}

/* ---- The view hash: BLAKE2b-64 (protocol/hashing.py) ------------------------------------ */

/* BLAKE2b (RFC 7693) with an 8-byte digest, no key, no salt or personalisation: what
   hashlib.blake2b(digest_size=8) computes, byte for byte (tests/protocol/test_native_hash.py
   compares the two over every length up to a few blocks and random bytes). protocol/hashing.py
   calls it where it is built: hashlib's object costs a method call for each of its copy, update
   and hexdigest (the last one copying the state again), about 1,500 instructions around the
   one block a seat's rule-2 hash compresses.

   A state is handed to Python as bytes (``blake2b_state``: what was absorbed so far, the
   buffered last block included) and resumed by ``blake2b_hex``, which never changes it: one
   state serves every audience of a revision, as hashlib's state copied for each did. */

typedef struct {
    uint64_t h[8];
    uint64_t t[2];
    uint64_t buflen;
    uint8_t buf[128];
} B2State;

static const uint64_t b2_iv[8] = {
    0x6a09e667f3bcc908ULL, 0xbb67ae8584caa73bULL, 0x3c6ef372fe94f82bULL, 0xa54ff53a5f1d36f1ULL,
    0x510e527fade682d1ULL, 0x9b05688c2b3e6c1fULL, 0x1f83d9abfb41bd6bULL, 0x5be0cd19137e2179ULL,
};

static const uint8_t b2_sigma[12][16] = {
    {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15},
    {14, 10, 4, 8, 9, 15, 13, 6, 1, 12, 0, 2, 11, 7, 5, 3},
    {11, 8, 12, 0, 5, 2, 15, 13, 10, 14, 3, 6, 7, 1, 9, 4},
    {7, 9, 3, 1, 13, 12, 11, 14, 2, 6, 5, 10, 4, 0, 15, 8},
    {9, 0, 5, 7, 2, 4, 10, 15, 14, 1, 11, 12, 6, 8, 3, 13},
    {2, 12, 6, 10, 0, 11, 8, 3, 4, 13, 7, 5, 15, 14, 1, 9},
    {12, 5, 1, 15, 14, 13, 4, 10, 0, 7, 6, 3, 9, 2, 8, 11},
    {13, 11, 7, 14, 12, 1, 3, 9, 5, 0, 15, 4, 8, 6, 2, 10},
    {6, 15, 14, 9, 11, 3, 0, 8, 12, 2, 13, 7, 1, 4, 10, 5},
    {10, 2, 8, 4, 7, 6, 1, 5, 15, 11, 9, 14, 3, 12, 13, 0},
    {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15},
    {14, 10, 4, 8, 9, 15, 13, 6, 1, 12, 0, 2, 11, 7, 5, 3},
};

static inline uint64_t b2_load(const uint8_t *p)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    uint64_t w;
    memcpy(&w, p, 8); /* (one load: the words are little-endian, as this machine's) */
    return w;
#else
    uint64_t w = 0;
    for (int i = 7; i >= 0; i--)
        w = (w << 8) | p[i];
    return w;
#endif
}

static inline uint64_t b2_rotr(uint64_t w, unsigned c)
{
    return (w >> c) | (w << (64 - c));
}

#define B2_G(r, i, a, b, c, d)                          \
    do {                                                \
        a = a + b + m[b2_sigma[r][2 * (i)]];            \
        d = b2_rotr(d ^ a, 32);                         \
        c = c + d;                                      \
        b = b2_rotr(b ^ c, 24);                         \
        a = a + b + m[b2_sigma[r][2 * (i) + 1]];        \
        d = b2_rotr(d ^ a, 16);                         \
        c = c + d;                                      \
        b = b2_rotr(b ^ c, 63);                         \
    } while (0)

#define B2_ROUND(r)                                     \
    do {                                                \
        B2_G(r, 0, v[0], v[4], v[8], v[12]);            \
        B2_G(r, 1, v[1], v[5], v[9], v[13]);            \
        B2_G(r, 2, v[2], v[6], v[10], v[14]);           \
        B2_G(r, 3, v[3], v[7], v[11], v[15]);           \
        B2_G(r, 4, v[0], v[5], v[10], v[15]);           \
        B2_G(r, 5, v[1], v[6], v[11], v[12]);           \
        B2_G(r, 6, v[2], v[7], v[8], v[13]);            \
        B2_G(r, 7, v[3], v[4], v[9], v[14]);            \
    } while (0)

static void b2_compress(B2State *s, const uint8_t *block, int last)
{
    uint64_t m[16], v[16];
    for (int i = 0; i < 16; i++)
        m[i] = b2_load(block + 8 * i);
    for (int i = 0; i < 8; i++) {
        v[i] = s->h[i];
        v[i + 8] = b2_iv[i];
    }
    v[12] ^= s->t[0];
    v[13] ^= s->t[1];
    if (last)
        v[14] = ~v[14];
    B2_ROUND(0);
    B2_ROUND(1);
    B2_ROUND(2);
    B2_ROUND(3);
    B2_ROUND(4);
    B2_ROUND(5);
    B2_ROUND(6);
    B2_ROUND(7);
    B2_ROUND(8);
    B2_ROUND(9);
    B2_ROUND(10);
    B2_ROUND(11);
    for (int i = 0; i < 8; i++)
        s->h[i] ^= v[i] ^ v[i + 8];
}

/* The same compression with the state's four rows in AVX2 registers (four 64-bit lanes: the
   column step is one G on four lanes, the diagonal step the same after rotating three rows),
   as the reference's AVX2 code does: about 750 instructions where the scalar one above takes
   about 1,900 (a seat's rule-2 hash is one compression; a revision of the tiny game hashes
   five). Taken when the CPU has AVX2 (``b2_simd``, asked once), else the scalar one. */
#if defined(__GNUC__) && defined(__x86_64__) \
    && defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#include <immintrin.h>
#define B2_AVX2 1

#define B2V_ROT32(x) _mm256_shuffle_epi32((x), _MM_SHUFFLE(2, 3, 0, 1))
#define B2V_ROT24(x) _mm256_shuffle_epi8((x), rot24)
#define B2V_ROT16(x) _mm256_shuffle_epi8((x), rot16)
#define B2V_ROT63(x) _mm256_or_si256(_mm256_srli_epi64((x), 63), _mm256_add_epi64((x), (x)))

/* (the message words of lanes 0 to 3, from sigma's row ``r`` at ``i``, ``i + 2``, ...) */
#define B2V_MSG(r, i)                                                                    \
    _mm256_set_epi64x((long long)m[b2_sigma[r][(i) + 6]], (long long)m[b2_sigma[r][(i) + 4]], \
                      (long long)m[b2_sigma[r][(i) + 2]], (long long)m[b2_sigma[r][(i)]])

#define B2V_HALF(x, rot_d, rot_b)                                 \
    do {                                                          \
        a = _mm256_add_epi64(_mm256_add_epi64(a, (x)), b);        \
        d = rot_d(_mm256_xor_si256(d, a));                        \
        c = _mm256_add_epi64(c, d);                               \
        b = rot_b(_mm256_xor_si256(b, c));                        \
    } while (0)

#define B2V_ROUND(r)                                                        \
    do {                                                                    \
        B2V_HALF(B2V_MSG(r, 0), B2V_ROT32, B2V_ROT24);                      \
        B2V_HALF(B2V_MSG(r, 1), B2V_ROT16, B2V_ROT63);                      \
        b = _mm256_permute4x64_epi64(b, _MM_SHUFFLE(0, 3, 2, 1));           \
        c = _mm256_permute4x64_epi64(c, _MM_SHUFFLE(1, 0, 3, 2));           \
        d = _mm256_permute4x64_epi64(d, _MM_SHUFFLE(2, 1, 0, 3));           \
        B2V_HALF(B2V_MSG(r, 8), B2V_ROT32, B2V_ROT24);                      \
        B2V_HALF(B2V_MSG(r, 9), B2V_ROT16, B2V_ROT63);                      \
        b = _mm256_permute4x64_epi64(b, _MM_SHUFFLE(2, 1, 0, 3));           \
        c = _mm256_permute4x64_epi64(c, _MM_SHUFFLE(1, 0, 3, 2));           \
        d = _mm256_permute4x64_epi64(d, _MM_SHUFFLE(0, 3, 2, 1));           \
    } while (0)

__attribute__((target("avx2"))) static void b2_compress_avx2(B2State *s, const uint8_t *block,
                                                             int last)
{
    uint64_t m[16];
    memcpy(m, block, sizeof(m));
    const __m256i rot24 = _mm256_setr_epi8(3, 4, 5, 6, 7, 0, 1, 2, 11, 12, 13, 14, 15, 8, 9, 10,
                                           3, 4, 5, 6, 7, 0, 1, 2, 11, 12, 13, 14, 15, 8, 9, 10);
    const __m256i rot16 = _mm256_setr_epi8(2, 3, 4, 5, 6, 7, 0, 1, 10, 11, 12, 13, 14, 15, 8, 9,
                                           2, 3, 4, 5, 6, 7, 0, 1, 10, 11, 12, 13, 14, 15, 8, 9);
    const __m256i h0 = _mm256_loadu_si256((const __m256i *)(const void *)&s->h[0]);
    const __m256i h1 = _mm256_loadu_si256((const __m256i *)(const void *)&s->h[4]);
    __m256i a = h0, b = h1;
    __m256i c = _mm256_loadu_si256((const __m256i *)(const void *)&b2_iv[0]);
    __m256i d = _mm256_xor_si256(
        _mm256_loadu_si256((const __m256i *)(const void *)&b2_iv[4]),
        _mm256_set_epi64x(0, last ? -1LL : 0, (long long)s->t[1], (long long)s->t[0]));
    B2V_ROUND(0);
    B2V_ROUND(1);
    B2V_ROUND(2);
    B2V_ROUND(3);
    B2V_ROUND(4);
    B2V_ROUND(5);
    B2V_ROUND(6);
    B2V_ROUND(7);
    B2V_ROUND(8);
    B2V_ROUND(9);
    B2V_ROUND(10);
    B2V_ROUND(11);
    _mm256_storeu_si256((__m256i *)(void *)&s->h[0], _mm256_xor_si256(h0, _mm256_xor_si256(a, c)));
    _mm256_storeu_si256((__m256i *)(void *)&s->h[4], _mm256_xor_si256(h1, _mm256_xor_si256(b, d)));
}

static int b2_simd = -1; /* whether the CPU has AVX2: -1 until asked (b2_compress_any) */
#endif

/* The compression: AVX2's where the CPU has it, else the scalar one (the same state after). */
static void b2_compress_any(B2State *s, const uint8_t *block, int last)
{
#ifdef B2_AVX2
    if (b2_simd < 0) {
        __builtin_cpu_init();
        b2_simd = __builtin_cpu_supports("avx2") ? 1 : 0;
    }
    if (b2_simd) {
        b2_compress_avx2(s, block, last);
        return;
    }
#endif
    b2_compress(s, block, last);
}

/* blake2b_simd(on): whether the compression may take its AVX2 code (the CPU's answer at first
   use otherwise; False forces the scalar one), the setting before returned: so that the tests
   run both on a machine with AVX2. */
static PyObject *py_blake2b_simd(PyObject *module, PyObject *on)
{
    (void)module;
    int want = PyObject_IsTrue(on);
    if (want < 0)
        return NULL;
#ifdef B2_AVX2
    if (b2_simd < 0) {
        __builtin_cpu_init();
        b2_simd = __builtin_cpu_supports("avx2") ? 1 : 0;
    }
    int before = b2_simd;
    b2_simd = want && __builtin_cpu_supports("avx2") ? 1 : 0;
    return PyBool_FromLong(before);
#else
    return PyBool_FromLong(0);
#endif
}

static void b2_count(B2State *s, uint64_t n)
{
    s->t[0] += n;
    if (s->t[0] < n)
        s->t[1] += 1;
}

static void b2_init(B2State *s)
{
    memset(s, 0, sizeof(*s));
    for (int i = 0; i < 8; i++)
        s->h[i] = b2_iv[i];
    s->h[0] ^= 0x01010000ULL | 8; /* depth 1, fanout 1, no key, an 8-byte digest */
}

/* blake2b_update of the reference: the last block (full or not) stays buffered until more
   comes, since only the final one is compressed with the last-block flag. */
static void b2_update(B2State *s, const uint8_t *in, size_t n)
{
    if (n == 0)
        return;
    size_t left = (size_t)s->buflen, fill = 128 - left;
    if (n > fill) {
        s->buflen = 0;
        memcpy(s->buf + left, in, fill);
        b2_count(s, 128);
        b2_compress_any(s, s->buf, 0);
        in += fill;
        n -= fill;
        while (n > 128) {
            b2_count(s, 128);
            b2_compress_any(s, in, 0);
            in += 128;
            n -= 128;
        }
    }
    memcpy(s->buf + s->buflen, in, n);
    s->buflen += n;
}

static int b2_read(PyObject *state, B2State *into)
{
    if (!PyBytes_CheckExact(state) || PyBytes_GET_SIZE(state) != (Py_ssize_t)sizeof(B2State)) {
        PyErr_SetString(PyExc_TypeError, "blake2b_hex: not a blake2b_state");
        return 0;
    }
    memcpy(into, PyBytes_AS_STRING(state), sizeof(B2State));
    return 1;
}

static int b2_absorb(B2State *s, PyObject *data)
{
    if (PyBytes_CheckExact(data)) { /* (the usual case: no buffer taken) */
        b2_update(s, (const uint8_t *)PyBytes_AS_STRING(data), (size_t)PyBytes_GET_SIZE(data));
        return 1;
    }
    Py_buffer view;
    if (PyObject_GetBuffer(data, &view, PyBUF_SIMPLE) < 0)
        return 0;
    b2_update(s, (const uint8_t *)view.buf, (size_t)view.len);
    PyBuffer_Release(&view);
    return 1;
}

/* blake2b_state(data=b""): the state of BLAKE2b-64 after ``data``, for blake2b_hex. */
static PyObject *py_blake2b_state(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs > 1) {
        PyErr_SetString(PyExc_TypeError, "blake2b_state(data: bytes = b'')");
        return NULL;
    }
    B2State s;
    b2_init(&s);
    if (nargs == 1 && !b2_absorb(&s, args[0]))
        return NULL;
    return PyBytes_FromStringAndSize((const char *)&s, sizeof(s));
}

/* blake2b_hex(state, value, after): the 16 hex digits of BLAKE2b-64 of what ``state`` absorbed
   followed by ``value`` and ``after`` (``state`` unchanged): hashlib's copy(), update(value),
   update(after) and hexdigest(). */
static PyObject *py_blake2b_hex(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 3) {
        PyErr_SetString(PyExc_TypeError, "blake2b_hex(state, value: bytes, after: bytes)");
        return NULL;
    }
    B2State s;
    if (!b2_read(args[0], &s) || !b2_absorb(&s, args[1]) || !b2_absorb(&s, args[2]))
        return NULL;
    b2_count(&s, s.buflen);
    memset(s.buf + s.buflen, 0, 128 - (size_t)s.buflen);
    b2_compress_any(&s, s.buf, 1);
    PyObject *out = PyUnicode_New(16, 127);
    if (out == NULL)
        return NULL;
    static const char digits[] = "0123456789abcdef";
    Py_UCS1 *text = PyUnicode_1BYTE_DATA(out);
    uint64_t h = s.h[0];
    for (int i = 0; i < 8; i++, h >>= 8) { /* the digest: h[0]'s bytes, little-endian */
        text[2 * i] = (Py_UCS1)digits[(h >> 4) & 0xF];
        text[2 * i + 1] = (Py_UCS1)digits[h & 0xF];
    }
    return out;
}

static PyMethodDef methods[] = {
    {"setup", (PyCFunction)(void (*)(void))py_setup, METH_FASTCALL,
     "Give the module patch.py's encoder, step caches and op size constants."},
    {"diff", (PyCFunction)(void (*)(void))py_diff, METH_FASTCALL,
     "diff(old, new, path, ops, sizes, enc, keep): patch._diff."},
    {"diff_child", (PyCFunction)(void (*)(void))py_diff_child, METH_FASTCALL,
     "diff_child(old, new, path, ops, sizes, enc, keep): patch._diff_child."},
    {"collapse", (PyCFunction)(void (*)(void))py_collapse, METH_FASTCALL,
     "collapse(ops, start, path, size, value, enc, keep): patch._collapse."},
    {"replaces_list", (PyCFunction)(void (*)(void))py_replaces_list, METH_FASTCALL,
     "replaces_list(old_len, new, path, size=None): patch._replaces_list."},
    {"op_size", (PyCFunction)(void (*)(void))py_op_size, METH_FASTCALL,
     "op_size(op, enc, keep): patch._OpBytes.size."},
    {"packed_size", py_packed_size, METH_O, "len(pack(value)), counted where it can be."},
    {"counted_size", py_counted_size, METH_O,
     "len(pack(value)) as counted without pack, or None where the count hands over to pack."},
    {"pack", py_pack, METH_O, "pack(value): protocol.codec.pack's bytes."},
    {"plain", py_plain, METH_O,
     "plain(value): protocol.codec.pack's bytes for the plain types, else None."},
    {"canonical", py_canonical, METH_O,
     "canonical(value): protocol.codec.canonical's bytes for the plain types, else None."},
    {"unpack", (PyCFunction)(void (*)(void))py_unpack, METH_FASTCALL,
     "unpack(data, default): protocol.codec.unpack's value, or default where not decoded."},
    {"join_ops", (PyCFunction)(void (*)(void))py_join_ops, METH_FASTCALL,
     "join_ops(ops, enc): patch._OpBytes.join."},
    {"blake2b_state", (PyCFunction)(void (*)(void))py_blake2b_state, METH_FASTCALL,
     "blake2b_state(data=b''): BLAKE2b-64's state after data, for blake2b_hex."},
    {"blake2b_hex", (PyCFunction)(void (*)(void))py_blake2b_hex, METH_FASTCALL,
     "blake2b_hex(state, value, after): the hex digest of state's data, value and after."},
    {"blake2b_simd", py_blake2b_simd, METH_O,
     "blake2b_simd(on): let the compression take AVX2 where the CPU has it (False: the scalar "
     "one); the setting before."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT,
    .m_name = "protocol._diffc",
    .m_doc = "The view diff of protocol/patch.py in C, the codec's plain encodings and the "
             "view hash's BLAKE2b-64 (see protocol/_diffc.c).",
    .m_size = -1,
    .m_methods = methods,
};

static PyObject *intern(const char *text)
{
    return PyUnicode_InternFromString(text);
}

PyMODINIT_FUNC PyInit__diffc(void)
{
    if (!(s_op = intern("op")) || !(s_path = intern("path")) || !(s_value = intern("value"))
        || !(s_replace = intern("replace")) || !(s_add = intern("add"))
        || !(s_remove = intern("remove")) || !(s_slash = intern("/"))
        || !(s_tilde = intern("~")) || !(s_tilde0 = intern("~0")) || !(s_tilde1 = intern("~1")))
        return NULL;
    return PyModule_Create(&module_def);
}
