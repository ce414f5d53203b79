/* games._gamesc: what the games package does per action that C does in far fewer steps (issue
   21): games/rng.py's SplitMix64 draws on a machine word, and games/base.py's memo key of a
   generic text.

   The draws. The same generator as the Python Rng, step for step: each function takes the state (any int:
   it is read modulo 2**64, as the Python's ``(state + _GAMMA) & _MASK`` reads it) and gives back
   the state after its draws with what they made, so the Python class keeps its one field and
   snapshots do not change. In Python the state and the products are integers beyond 62 bits,
   which compiled code holds as heap objects: about 7,000 instructions a draw, against a few
   dozen here. tests/games/test_rng.py compares many draws and shuffles with the Python.

   Only what is exact in 64 bits is done here: rng.py calls ``below`` for ``1 <= n < 2**64``
   and ``shuffle`` for a list (exactly a list: another sequence's item assignment may run
   code), and does everything else itself. */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>

#define GAMMA 0x9E3779B97F4A7C15ULL

/* Rng.next_u64. */
static inline uint64_t next_u64(uint64_t *state)
{
    uint64_t z = (*state += GAMMA);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

/* Rng.below, for 1 <= n: the same rejection bound, 2**64 - 2**64 % n (all draws when n is a
   power of two: the remainder is 0), computed as (0 - n) % n, which is 2**64 % n. */
static inline uint64_t below(uint64_t *state, uint64_t n)
{
    uint64_t rest = (0 - n) % n;
    for (;;) {
        uint64_t x = next_u64(state);
        if (rest == 0 || x < 0 - rest)
            return x % n;
    }
}

static int read_state(PyObject *arg, uint64_t *state)
{
    if (!PyLong_Check(arg)) {
        PyErr_SetString(PyExc_TypeError, "the state is an int");
        return -1;
    }
    *state = PyLong_AsUnsignedLongLongMask(arg);
    return *state == (uint64_t)-1 && PyErr_Occurred() ? -1 : 0;
}

/* next_u64(state) -> (state, value) */
static PyObject *py_next_u64(PyObject *self, PyObject *arg)
{
    uint64_t state;
    if (read_state(arg, &state) < 0)
        return NULL;
    uint64_t value = next_u64(&state);
    return Py_BuildValue("(KK)", (unsigned long long)state, (unsigned long long)value);
}

/* below(state, n) -> (state, value), 1 <= n < 2**64 */
static PyObject *py_below(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    uint64_t state;
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "below(state, n)");
        return NULL;
    }
    if (read_state(args[0], &state) < 0)
        return NULL;
    unsigned long long n = PyLong_AsUnsignedLongLong(args[1]);
    if (n == (unsigned long long)-1 && PyErr_Occurred())
        return NULL;
    if (n == 0) {
        PyErr_SetString(PyExc_ValueError, "below() needs n >= 1");
        return NULL;
    }
    uint64_t value = below(&state, n);
    return Py_BuildValue("(KK)", (unsigned long long)state, (unsigned long long)value);
}

/* shuffle(state, items) -> state: Rng.shuffle's Fisher-Yates on a list, in place. */
static PyObject *py_shuffle(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    uint64_t state;
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "shuffle(state, items)");
        return NULL;
    }
    if (read_state(args[0], &state) < 0)
        return NULL;
    PyObject *items = args[1];
    if (!PyList_CheckExact(items)) {
        PyErr_SetString(PyExc_TypeError, "shuffle() takes a list");
        return NULL;
    }
    /* (no Python code runs in the loop: the list keeps its length, and a swap moves references
       without changing their counts) */
    for (Py_ssize_t i = PyList_GET_SIZE(items) - 1; i > 0; i--) {
        Py_ssize_t j = (Py_ssize_t)below(&state, (uint64_t)i + 1);
        PyObject *item = PyList_GET_ITEM(items, i);
        PyList_SET_ITEM(items, i, PyList_GET_ITEM(items, j));
        PyList_SET_ITEM(items, j, item);
    }
    return PyLong_FromUnsignedLongLong(state);
}

/* text_key(mark, mapping) -> tuple | None: base._text_key, the same tuple (mark, then each key
   and value in order) or None (not exactly a dict, or a value that is not exactly an int, a str
   or None), made at its final size instead of through a list (a third of the instructions);
   tests/games/test_generic_texts.py compares the two. */
static PyObject *py_text_key(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "text_key(mark, mapping)");
        return NULL;
    }
    PyObject *mapping = args[1];
    if (!PyDict_CheckExact(mapping))
        Py_RETURN_NONE;
    PyObject *key = PyTuple_New(1 + 2 * PyDict_GET_SIZE(mapping));
    if (key == NULL)
        return NULL;
    Py_INCREF(args[0]);
    PyTuple_SET_ITEM(key, 0, args[0]);
    /* (no Python code runs in the loop: the dict keeps its size) */
    Py_ssize_t pos = 0, at = 1;
    PyObject *name, *value;
    while (PyDict_Next(mapping, &pos, &name, &value)) {
        if (!PyLong_CheckExact(value) && !PyUnicode_CheckExact(value) && value != Py_None) {
            Py_DECREF(key);
            Py_RETURN_NONE;
        }
        Py_INCREF(name);
        PyTuple_SET_ITEM(key, at++, name);
        Py_INCREF(value);
        PyTuple_SET_ITEM(key, at++, value);
    }
    return key;
}

static PyMethodDef methods[] = {
    {"text_key", (PyCFunction)(void (*)(void))py_text_key, METH_FASTCALL,
     "text_key(mark, mapping) -> tuple | None: games.base._text_key."},
    {"next_u64", py_next_u64, METH_O, "next_u64(state) -> (state, value): Rng.next_u64."},
    {"below", (PyCFunction)(void (*)(void))py_below, METH_FASTCALL,
     "below(state, n) -> (state, value): Rng.below for 1 <= n < 2**64."},
    {"shuffle", (PyCFunction)(void (*)(void))py_shuffle, METH_FASTCALL,
     "shuffle(state, items) -> state: Rng.shuffle of a list, in place."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT,
    .m_name = "games._gamesc",
    .m_doc = "games/rng.py's SplitMix64 draws on a machine word and games/base.py's memo key "
             "of a generic text (see games/_gamesc.c).",
    .m_size = -1,
    .m_methods = methods,
};

PyMODINIT_FUNC PyInit__gamesc(void)
{
    return PyModule_Create(&module_def);
}
