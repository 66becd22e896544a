/* Shared by the compiled helpers that read the rules' state tuple (referee/rules/_legal.c,
 * referee/env/_observe.c): their setup() is given the tuple's field positions by the Python
 * side, which owns the layout, and reads them with read_positions. */
#ifndef GIN_REFEREE_POSITIONS_H
#define GIN_REFEREE_POSITIONS_H

#include <Python.h>

/* Reads the n non-negative ints of `tuple` (a tuple of at least n items) into out[0..n).
 * Returns the largest plus one (the least length of a tuple they index), or -1 with an
 * exception set: a ValueError "setup: <what> is negative", or the int conversion's own. */
static Py_ssize_t read_positions(PyObject *tuple, Py_ssize_t *out, Py_ssize_t n,
                                 const char *what)
{
    Py_ssize_t least = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        out[i] = PyLong_AsSsize_t(PyTuple_GET_ITEM(tuple, i));
        if (out[i] < 0) {
            if (!PyErr_Occurred())
                PyErr_Format(PyExc_ValueError, "setup: %s is negative", what);
            return -1;
        }
        if (out[i] + 1 > least)
            least = out[i] + 1;
    }
    return least;
}

#endif
