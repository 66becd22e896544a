/* legal_actions (and discard_options) of referee/rules/state.py, compiled: the same values.
 *
 * state.py hands setup() the positions of the HandState fields read here (HandState is a
 * NamedTuple, read by index), the Phase members, the answers of the phases that need no
 * search (first upcard, stock only, draw, over), the 52 interned discards and knocks, big gin,
 * and two Python functions for what is left to Python: the exact knock search (memoised there,
 * reached only when the cheap bound below lets a hand through) and the deadwood of a hand. The
 * bound is melds.py's: the cards in no meld at all, less the dearest of them, stay deadwood
 * whatever is discarded. Anything outside what it knows (a phase it was not given, a field of
 * the wrong type) raises; an install without a C compiler uses state.py's Python function.
 *
 * Pure: no I/O, no clock, no state but the tables built by setup().
 * tests/rules/test_compiled.py checks it against the Python function.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>

#include "_positions.h"

enum { F_RULES, F_HANDS, F_PHASE, F_TO_ACT, F_PASSES, F_TAKEN, F_KNOCK_LIMIT, N_FIELDS };
enum { P_FIRST, P_DRAW, P_DISCARD, P_OVER, N_PHASES };

static int ready = 0;
static Py_ssize_t field[N_FIELDS];
static Py_ssize_t state_min_size = 0;
static PyObject *phase[N_PHASES];
static PyObject *first_upcard, *stock_only, *draw, *over; /* the fixed answers (tuples) */
static PyObject *discard[52], *knock[52], *big_gin;
static PyObject *exact, *deadwood, *big_gin_bonus_name;
static uint16_t run_cover[1 << 13];
static uint8_t row_value[1 << 13], row_top[1 << 13];

#define ROW 0x1fffULL

static void build_tables(void)
{
    for (int r = 0; r < (1 << 13); r++) {
        int s = r & r >> 1 & r >> 2;
        run_cover[r] = (uint16_t)((s | s << 1 | s << 2) & (int)ROW);
        int value = 0, top = 0;
        for (int bit = 0; bit < 13; bit++)
            if (r >> bit & 1) {
                top = bit < 10 ? bit + 1 : 10;
                value += top;
            }
        row_value[r] = (uint8_t)value;
        row_top[r] = (uint8_t)top;
    }
}

static int take_tuple(PyObject *value, PyObject **out, Py_ssize_t size, const char *what)
{
    if (!PyTuple_Check(value) || (size >= 0 && PyTuple_GET_SIZE(value) != size)) {
        PyErr_Format(PyExc_TypeError, "setup: %s must be a tuple", what);
        return -1;
    }
    Py_XDECREF(*out);
    *out = Py_NewRef(value);
    return 0;
}

/* setup(fields, phases, answers, discards, knocks, big_gin, exact, deadwood) */
static PyObject *setup(PyObject *self, PyObject *args)
{
    PyObject *fields, *phases, *answers, *discards, *knocks, *big, *exact_fn, *deadwood_fn;
    if (!PyArg_ParseTuple(args, "O!O!O!O!O!OOO", &PyTuple_Type, &fields, &PyTuple_Type, &phases,
                          &PyTuple_Type, &answers, &PyTuple_Type, &discards, &PyTuple_Type,
                          &knocks, &big, &exact_fn, &deadwood_fn))
        return NULL;
    if (PyTuple_GET_SIZE(fields) != N_FIELDS || PyTuple_GET_SIZE(phases) != N_PHASES
        || PyTuple_GET_SIZE(answers) != 4 || PyTuple_GET_SIZE(discards) != 52
        || PyTuple_GET_SIZE(knocks) != 52 || !PyCallable_Check(exact_fn)
        || !PyCallable_Check(deadwood_fn)) {
        PyErr_SetString(PyExc_ValueError, "setup: wrong fields, phases, answers or actions");
        return NULL;
    }
    ready = 0; /* a failed setup leaves the helper unusable, never half set up */
    state_min_size = read_positions(fields, field, N_FIELDS, "a field position");
    if (state_min_size < 0)
        return NULL;
    PyObject **fixed[4] = {&first_upcard, &stock_only, &draw, &over};
    for (int i = 0; i < 4; i++)
        if (take_tuple(PyTuple_GET_ITEM(answers, i), fixed[i], -1, "an answer") < 0)
            return NULL;
    for (int i = 0; i < N_PHASES; i++) {
        Py_XDECREF(phase[i]);
        phase[i] = Py_NewRef(PyTuple_GET_ITEM(phases, i));
    }
    for (int i = 0; i < 52; i++) {
        Py_XDECREF(discard[i]);
        discard[i] = Py_NewRef(PyTuple_GET_ITEM(discards, i));
        Py_XDECREF(knock[i]);
        knock[i] = Py_NewRef(PyTuple_GET_ITEM(knocks, i));
    }
    Py_XDECREF(big_gin);
    big_gin = Py_NewRef(big);
    Py_XDECREF(exact);
    exact = Py_NewRef(exact_fn);
    Py_XDECREF(deadwood);
    deadwood = Py_NewRef(deadwood_fn);
    if (big_gin_bonus_name == NULL) {
        big_gin_bonus_name = PyUnicode_InternFromString("big_gin_bonus");
        if (big_gin_bonus_name == NULL)
            return NULL;
        build_tables();
    }
    ready = 1;
    Py_RETURN_NONE;
}

/* Whether the cheap bound lets the hand through to the exact search. */
static int may_knock(uint64_t hand, long limit)
{
    uint64_t a = hand & ROW, b = hand >> 13 & ROW, c = hand >> 26 & ROW, d = hand >> 39 & ROW;
    uint64_t threes = (a & b & (c | d)) | (c & d & (a | b));
    uint64_t fa = a & ~(run_cover[a] | threes), fb = b & ~(run_cover[b] | threes);
    uint64_t fc = c & ~(run_cover[c] | threes), fd = d & ~(run_cover[d] | threes);
    long value = row_value[fa] + row_value[fb] + row_value[fc] + row_value[fd];
    int top = row_top[fa];
    if (row_top[fb] > top)
        top = row_top[fb];
    if (row_top[fc] > top)
        top = row_top[fc];
    if (row_top[fd] > top)
        top = row_top[fd];
    return value - top <= limit;
}

/* The discard phase's options: the cards that may be discarded, those that may be discarded
 * with a knock, whether big gin may be declared; -1 with an error set on failure. */
static int options(PyObject *state, uint64_t *allowed_out, uint64_t *knocks_out, int *big_out)
{
    PyObject *hands = PyTuple_GET_ITEM(state, field[F_HANDS]);
    long seat = PyLong_AsLong(PyTuple_GET_ITEM(state, field[F_TO_ACT]));
    long taken = PyLong_AsLong(PyTuple_GET_ITEM(state, field[F_TAKEN]));
    PyObject *limit_obj = PyTuple_GET_ITEM(state, field[F_KNOCK_LIMIT]);
    long limit = PyLong_AsLong(limit_obj);
    if (PyErr_Occurred())
        return -1;
    if (!PyTuple_Check(hands) || PyTuple_GET_SIZE(hands) != 2 || (seat != 0 && seat != 1)
        || taken > 51) {
        PyErr_SetString(PyExc_TypeError, "legal_actions: state fields of the wrong type");
        return -1;
    }
    PyObject *hand_obj = PyTuple_GET_ITEM(hands, seat);
    uint64_t hand = PyLong_AsUnsignedLongLong(hand_obj);
    if (hand == (uint64_t)-1 && PyErr_Occurred())
        return -1;
    if (hand >> 52) {
        PyErr_SetString(PyExc_ValueError, "legal_actions: a hand beyond 52 cards");
        return -1;
    }
    uint64_t allowed = taken >= 0 ? hand & ~(((uint64_t)1) << taken) : hand;
    uint64_t knocks = 0;
    Py_ssize_t n_found = 0;
    if (may_knock(hand, limit)) {
        PyObject *call[2] = {hand_obj, limit_obj};
        PyObject *found = PyObject_Vectorcall(exact, call, 2, NULL);
        if (found == NULL)
            return -1;
        if (!PyTuple_Check(found)) {
            Py_DECREF(found);
            PyErr_SetString(PyExc_TypeError, "legal_actions: the knock search gave no tuple");
            return -1;
        }
        n_found = PyTuple_GET_SIZE(found);
        for (Py_ssize_t i = 0; i < n_found; i++) {
            long index = PyLong_AsLong(PyTuple_GET_ITEM(found, i));
            if (index < 0 || index > 51) {
                Py_DECREF(found);
                if (!PyErr_Occurred())
                    PyErr_SetString(PyExc_ValueError, "legal_actions: a card index out of range");
                return -1;
            }
            knocks |= ((uint64_t)1) << index;
        }
        Py_DECREF(found);
    }
    int with_big_gin = 0;
    if (n_found > 0) { /* big gin implies a discard that leaves 0 deadwood: only then */
        PyObject *rules = PyTuple_GET_ITEM(state, field[F_RULES]);
        PyObject *bonus = PyObject_GetAttr(rules, big_gin_bonus_name);
        if (bonus == NULL)
            return -1;
        int played = bonus != Py_None;
        Py_DECREF(bonus);
        if (played) {
            PyObject *dw = PyObject_Vectorcall(deadwood, &hand_obj, 1, NULL);
            if (dw == NULL)
                return -1;
            long value = PyLong_AsLong(dw);
            Py_DECREF(dw);
            if (value == -1 && PyErr_Occurred())
                return -1;
            with_big_gin = value == 0;
        }
    }
    *allowed_out = allowed;
    *knocks_out = knocks & allowed;
    *big_out = with_big_gin;
    return 0;
}

static PyObject *discard_phase(PyObject *state)
{
    uint64_t allowed, knocks;
    int with_big_gin;
    if (options(state, &allowed, &knocks, &with_big_gin) < 0)
        return NULL;
    Py_ssize_t size = __builtin_popcountll(allowed) + __builtin_popcountll(knocks) + with_big_gin;
    PyObject *out = PyTuple_New(size);
    if (out == NULL)
        return NULL;
    Py_ssize_t at = 0;
    for (uint64_t m = allowed; m; m &= m - 1)
        PyTuple_SET_ITEM(out, at++, Py_NewRef(discard[__builtin_ctzll(m)]));
    for (uint64_t m = knocks; m; m &= m - 1)
        PyTuple_SET_ITEM(out, at++, Py_NewRef(knock[__builtin_ctzll(m)]));
    if (with_big_gin)
        PyTuple_SET_ITEM(out, at++, Py_NewRef(big_gin));
    return out;
}

static int check_state(PyObject *state, const char *who)
{
    if (!ready) {
        PyErr_Format(PyExc_RuntimeError, "%s: setup() was not called", who);
        return -1;
    }
    if (!PyTuple_Check(state) || PyTuple_GET_SIZE(state) < state_min_size) {
        PyErr_Format(PyExc_TypeError, "%s: state must be a HandState", who);
        return -1;
    }
    return 0;
}

/* discard_options(state) of a discard phase: (discards, knocks, big_gin) as state.py's. */
static PyObject *discard_options(PyObject *self, PyObject *state)
{
    if (check_state(state, "discard_options") < 0)
        return NULL;
    if (PyTuple_GET_ITEM(state, field[F_PHASE]) != phase[P_DISCARD]) {
        PyErr_SetString(PyExc_ValueError, "discard_options: not a discard phase");
        return NULL;
    }
    uint64_t allowed, knocks;
    int with_big_gin;
    if (options(state, &allowed, &knocks, &with_big_gin) < 0)
        return NULL;
    return Py_BuildValue("(KKO)", (unsigned long long)allowed, (unsigned long long)knocks,
                         with_big_gin ? Py_True : Py_False);
}

static PyObject *legal_actions(PyObject *self, PyObject *state)
{
    if (check_state(state, "legal_actions") < 0)
        return NULL;
    PyObject *now = PyTuple_GET_ITEM(state, field[F_PHASE]);
    if (now == phase[P_DISCARD])
        return discard_phase(state);
    if (now == phase[P_DRAW])
        return Py_NewRef(draw);
    if (now == phase[P_FIRST]) {
        long passes = PyLong_AsLong(PyTuple_GET_ITEM(state, field[F_PASSES]));
        if (passes == -1 && PyErr_Occurred())
            return NULL;
        return Py_NewRef(passes >= 2 ? stock_only : first_upcard);
    }
    if (now == phase[P_OVER])
        return Py_NewRef(over);
    PyErr_SetString(PyExc_ValueError, "legal_actions: a phase it was not set up for");
    return NULL;
}

static PyMethodDef methods[] = {
    {"setup", setup, METH_VARARGS, "Set the field positions, phases, answers and actions."},
    {"legal_actions", legal_actions, METH_O, "Every legal action of a state, in order."},
    {"discard_options", discard_options, METH_O, "A discard phase's options as masks."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "referee.rules._legal",
    "legal_actions, compiled (see referee/rules/state.py).", -1, methods,
};

PyMODINIT_FUNC PyInit__legal(void) { return PyModule_Create(&module); }
