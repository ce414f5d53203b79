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
   there is one source of each. */

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
        bytes = PyObject_CallOneArg(pack_fn, op);
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
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT,
    .m_name = "protocol._diffc",
    .m_doc = "The view diff of protocol/patch.py in C (see protocol/_diffc.c).",
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
