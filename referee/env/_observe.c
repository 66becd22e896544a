/* The environment's observation, compiled: referee/env/observe.py's fill, written in C.
 *
 * observe.py knows the encoding: it hands setup() the positions of the HandState fields read
 * here (HandState is a NamedTuple, read by index), the four Phase members in the order of the
 * phase block, and the layout offsets. fill() then writes one seat's observation and action
 * mask (0/1 bytes) into a caller's buffer from the state, the stock masks of the deal, the
 * seat's fixed bytes for the hand (dealer, doubled, knock limit, scores) and the legal actions
 * as a mask over the action numbers. It knows nothing else; anything it was not set up for
 * (a phase it was not given, a field of the wrong type) raises, and observe.py's Python fill
 * is what an install without a C compiler uses.
 *
 * tests/env/test_observe.py checks it against the Python fill and the protocol's encoding.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>

#include "../rules/_positions.h"
#include <string.h>

enum { F_DECK, F_HANDS, F_STOCK_POS, F_PILE, F_PHASE, F_TO_ACT, F_TAKEN, F_KNOWN, N_FIELDS };
enum { O_TOP, O_PILE, O_KNOWN, O_TAKEN, O_PHASE, O_TO_ACT, O_ELEVEN, O_STOCK, O_OBS, O_ACTIONS,
       N_OFFSETS };

static int ready = 0;
static Py_ssize_t field[N_FIELDS];
static Py_ssize_t state_min_size = 0;
static PyObject *phase_obj[4];
static Py_ssize_t offset[N_OFFSETS];
static const uint64_t FULL = (((uint64_t)1) << 52) - 1;

static PyObject *setup(PyObject *self, PyObject *args)
{
    PyObject *fields, *phases, *offsets;
    if (!PyArg_ParseTuple(args, "O!O!O!", &PyTuple_Type, &fields, &PyTuple_Type, &phases,
                          &PyTuple_Type, &offsets))
        return NULL;
    if (PyTuple_GET_SIZE(fields) != N_FIELDS || PyTuple_GET_SIZE(phases) != 4
        || PyTuple_GET_SIZE(offsets) != N_OFFSETS) {
        PyErr_SetString(PyExc_ValueError, "setup: wrong number of fields, phases or offsets");
        return NULL;
    }
    ready = 0; /* a failed setup leaves the helper unusable, never half set up */
    state_min_size = read_positions(fields, field, N_FIELDS, "a field position");
    if (state_min_size < 0)
        return NULL;
    if (read_positions(offsets, offset, N_OFFSETS, "an offset") < 0)
        return NULL;
    for (int i = 0; i < 4; i++) {
        Py_XDECREF(phase_obj[i]);
        phase_obj[i] = Py_NewRef(PyTuple_GET_ITEM(phases, i));
    }
    ready = 1;
    Py_RETURN_NONE;
}

/* A non-negative int below 2**64 (a card mask); sets an error and returns 0 otherwise. */
static uint64_t as_mask(PyObject *value, int *failed)
{
    if (!PyLong_Check(value)) {
        PyErr_SetString(PyExc_TypeError, "fill: a card mask must be an int");
        *failed = 1;
        return 0;
    }
    uint64_t out = PyLong_AsUnsignedLongLong(value);
    if (out == (uint64_t)-1 && PyErr_Occurred())
        *failed = 1;
    return out;
}

static void put(char *out, Py_ssize_t at, uint64_t mask)
{
    while (mask) {
        out[at + __builtin_ctzll(mask)] = 1;
        mask &= mask - 1;
    }
}

/* fill(buffer, state, seat, stock, fixed, legal): see the file's comment. */
static PyObject *fill(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    if (!ready) {
        PyErr_SetString(PyExc_RuntimeError, "fill: setup() was not called");
        return NULL;
    }
    if (nargs != 6) {
        PyErr_SetString(PyExc_TypeError, "fill takes 6 arguments");
        return NULL;
    }
    PyObject *state = args[1], *stock = args[3], *fixed = args[4], *legal = args[5];
    long seat = PyLong_AsLong(args[2]);
    if (seat != 0 && seat != 1) {
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_ValueError, "fill: seat must be 0 or 1");
        return NULL;
    }
    if (!PyTuple_Check(state) || PyTuple_GET_SIZE(state) < state_min_size) {
        PyErr_SetString(PyExc_TypeError, "fill: state must be a HandState");
        return NULL;
    }
    if (!PyList_Check(stock) || PyList_GET_SIZE(stock) != 53) {
        PyErr_SetString(PyExc_TypeError, "fill: stock must be a list of 53 masks");
        return NULL;
    }
    if (!PyBytes_Check(fixed) || PyBytes_GET_SIZE(fixed) != offset[O_OBS] + offset[O_ACTIONS]) {
        PyErr_SetString(PyExc_TypeError, "fill: fixed must be the bytes of a whole observation");
        return NULL;
    }
    PyObject *hands = PyTuple_GET_ITEM(state, field[F_HANDS]);
    PyObject *known = PyTuple_GET_ITEM(state, field[F_KNOWN]);
    PyObject *pile = PyTuple_GET_ITEM(state, field[F_PILE]);
    PyObject *deck = PyTuple_GET_ITEM(state, field[F_DECK]);
    if (!PyTuple_Check(hands) || PyTuple_GET_SIZE(hands) != 2 || !PyTuple_Check(known)
        || PyTuple_GET_SIZE(known) != 2 || !PyTuple_Check(pile) || !PyTuple_Check(deck)) {
        PyErr_SetString(PyExc_TypeError, "fill: state fields of the wrong type");
        return NULL;
    }
    int failed = 0;
    uint64_t h0 = as_mask(PyTuple_GET_ITEM(hands, 0), &failed);
    uint64_t h1 = as_mask(PyTuple_GET_ITEM(hands, 1), &failed);
    uint64_t opp_known = as_mask(PyTuple_GET_ITEM(known, 1 - seat), &failed);
    Py_ssize_t stock_pos = PyLong_AsSsize_t(PyTuple_GET_ITEM(state, field[F_STOCK_POS]));
    long to_act = PyLong_AsLong(PyTuple_GET_ITEM(state, field[F_TO_ACT]));
    long taken = PyLong_AsLong(PyTuple_GET_ITEM(state, field[F_TAKEN]));
    if (failed || PyErr_Occurred())
        return NULL;
    if (stock_pos < 0 || stock_pos > 52) {
        PyErr_SetString(PyExc_ValueError, "fill: stock position out of range");
        return NULL;
    }
    uint64_t in_stock = as_mask(PyList_GET_ITEM(stock, stock_pos), &failed);
    if (failed)
        return NULL;
    PyObject *phase = PyTuple_GET_ITEM(state, field[F_PHASE]);
    int phase_index = -1;
    for (int i = 0; i < 4; i++)
        if (phase == phase_obj[i])
            phase_index = i;
    if (phase_index < 0) {
        PyErr_SetString(PyExc_ValueError, "fill: a phase it was not set up for");
        return NULL;
    }
    uint64_t top = 0;
    Py_ssize_t pile_size = PyTuple_GET_SIZE(pile);
    if (pile_size > 0) {
        long card = PyLong_AsLong(PyTuple_GET_ITEM(pile, pile_size - 1));
        if (card < 0 || card > 51) {
            if (!PyErr_Occurred())
                PyErr_SetString(PyExc_ValueError, "fill: a card index out of range");
            return NULL;
        }
        top = ((uint64_t)1) << card;
    }
    int mine = to_act == seat && phase_index != 3;
    uint64_t taken_mask = 0;
    if (mine && taken >= 0) {
        if (taken > 51) {
            PyErr_SetString(PyExc_ValueError, "fill: a card index out of range");
            return NULL;
        }
        taken_mask = ((uint64_t)1) << taken;
    }
    uint64_t low = 0, high = 0;
    if (mine) {
        low = PyLong_AsUnsignedLongLongMask(legal);
        if (low == (uint64_t)-1 && PyErr_Occurred())
            return NULL;
        PyObject *shift = PyLong_FromLong(64);
        PyObject *rest = shift == NULL ? NULL : PyNumber_Rshift(legal, shift);
        Py_XDECREF(shift);
        if (rest == NULL)
            return NULL;
        high = PyLong_AsUnsignedLongLong(rest);
        Py_DECREF(rest);
        if (high == (uint64_t)-1 && PyErr_Occurred())
            return NULL;
    }
    Py_ssize_t stock_size = PyTuple_GET_SIZE(deck) - stock_pos;
    if (stock_size > 31)
        stock_size = 31;
    if (stock_size < 0)
        stock_size = 0;
    uint64_t mine_hand = seat ? h1 : h0, other_hand = seat ? h0 : h1;

    Py_buffer view;
    if (PyObject_GetBuffer(args[0], &view, PyBUF_WRITABLE | PyBUF_C_CONTIGUOUS) < 0)
        return NULL;
    Py_ssize_t size = offset[O_OBS] + offset[O_ACTIONS];
    if (view.len != size) {
        PyBuffer_Release(&view);
        PyErr_SetString(PyExc_ValueError, "fill: the buffer must hold a whole observation");
        return NULL;
    }
    char *out = view.buf;
    memcpy(out, PyBytes_AS_STRING(fixed), size);
    put(out, 0, mine_hand);
    put(out, offset[O_TOP], top);
    put(out, offset[O_PILE], FULL & ~(h0 | h1 | in_stock | top));
    put(out, offset[O_KNOWN], opp_known);
    put(out, offset[O_TAKEN], taken_mask);
    out[offset[O_PHASE] + phase_index] = 1;
    out[offset[O_TO_ACT]] = (char)mine;
    out[offset[O_ELEVEN]] = __builtin_popcountll(other_hand) == 11;
    out[offset[O_STOCK] + stock_size] = 1;
    Py_ssize_t actions = offset[O_ACTIONS];
    for (Py_ssize_t i = 0; i < actions && i < 64; i++)
        if (low >> i & 1)
            out[offset[O_OBS] + i] = 1;
    for (Py_ssize_t i = 64; i < actions && i < 128; i++)
        if (high >> (i - 64) & 1)
            out[offset[O_OBS] + i] = 1;
    PyBuffer_Release(&view);
    Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"setup", setup, METH_VARARGS, "Set the HandState field positions, phases and layout."},
    {"fill", (PyCFunction)(void (*)(void))fill, METH_FASTCALL,
     "fill(buffer, state, seat, stock, fixed, legal): write one seat's observation."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "referee.env._observe",
    "The environment's observation writer, compiled (see referee/env/observe.py).", -1, methods,
};

PyMODINIT_FUNC PyInit__observe(void) { return PyModule_Create(&module); }
