/* apply of referee/rules/moves.py, compiled for the three moves of nearly every decision.
 *
 * moves.py hands setup() the HandState class and the positions of its fields (a NamedTuple,
 * read and built by index), the Phase members, the DrawStock and TakeDiscard singletons, the
 * Discard class, the wall (stock cards left at which a discard voids the hand) and the Python
 * functions to fall back on (apply's and apply_unchecked's). apply(state, action) plays here, with moves.py's checks, a
 * draw from the stock or a take of the discard in the draw phase, and a discard that neither
 * meets the wall nor the turn cap; everything else (an illegal move, the first upcard, a knock,
 * big gin, a hand's end, an input it does not know) is the fallback's, called with the same
 * arguments, so results and errors are the Python function's own. apply_unchecked is the same
 * with the other fallback (for a legal move both give the same state).
 *
 * Pure: no I/O, no clock, no state but what setup() was given.
 * tests/rules/test_compiled.py checks it against the Python function.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>

enum { F_RULES, F_DECK, F_HANDS, F_STOCK_POS, F_PILE, F_PHASE, F_TO_ACT, F_TAKEN, F_KNOWN, F_TURN,
       N_FIELDS };

static int ready = 0;
static PyTypeObject *state_type = NULL;
static Py_ssize_t n_items = 0;
static Py_ssize_t field[N_FIELDS];
static PyObject *p_draw, *p_discard, *draw_stock, *take_discard, *discard_type;
static PyObject *fallback, *fallback_unchecked;
static PyObject *minus_one, *s_card, *s_index, *s_turn_cap;
static long wall = 2;

static void keep(PyObject **slot, PyObject *value)
{
    Py_XDECREF(*slot);
    *slot = Py_NewRef(value);
}

/* setup(state_type, fields, (draw, discard), draw_stock, take_discard, discard_type, wall,
 *       fallback, fallback_unchecked) */
static PyObject *setup(PyObject *self, PyObject *args)
{
    PyObject *type, *fields, *phases, *draw, *take, *dtype, *fall, *fall_unchecked;
    long wall_cards;
    if (!PyArg_ParseTuple(args, "O!O!O!OOO!lOO", &PyType_Type, &type, &PyTuple_Type, &fields,
                          &PyTuple_Type, &phases, &draw, &take, &PyType_Type, &dtype,
                          &wall_cards, &fall, &fall_unchecked))
        return NULL;
    if (!PyType_IsSubtype((PyTypeObject *)type, &PyTuple_Type)
        || PyTuple_GET_SIZE(fields) != N_FIELDS + 1 || PyTuple_GET_SIZE(phases) != 2
        || !PyCallable_Check(fall) || !PyCallable_Check(fall_unchecked)) {
        PyErr_SetString(PyExc_ValueError, "setup: wrong state type, fields or phases");
        return NULL;
    }
    /* the last of fields is the number of fields of the state */
    n_items = PyLong_AsSsize_t(PyTuple_GET_ITEM(fields, N_FIELDS));
    if (n_items < 1 || n_items > 64) {
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_ValueError, "setup: a state's size out of range");
        return NULL;
    }
    for (Py_ssize_t i = 0; i < N_FIELDS; i++) {
        field[i] = PyLong_AsSsize_t(PyTuple_GET_ITEM(fields, i));
        if (field[i] < 0 || field[i] >= n_items) {
            if (!PyErr_Occurred())
                PyErr_SetString(PyExc_ValueError, "setup: a field position out of range");
            return NULL;
        }
    }
    keep((PyObject **)&state_type, type);
    keep(&p_draw, PyTuple_GET_ITEM(phases, 0));
    keep(&p_discard, PyTuple_GET_ITEM(phases, 1));
    keep(&draw_stock, draw);
    keep(&take_discard, take);
    keep(&discard_type, dtype);
    keep(&fallback, fall);
    keep(&fallback_unchecked, fall_unchecked);
    wall = wall_cards;
    if (minus_one == NULL) {
        minus_one = PyLong_FromLong(-1);
        s_card = PyUnicode_InternFromString("card");
        s_index = PyUnicode_InternFromString("index");
        s_turn_cap = PyUnicode_InternFromString("turn_cap");
        if (minus_one == NULL || s_card == NULL || s_index == NULL || s_turn_cap == NULL)
            return NULL;
    }
    ready = 1;
    Py_RETURN_NONE;
}

/* A new state: a copy of ``state`` with the items of ``at`` replaced by ``values`` (new
 * references, stolen, also on failure). */
static PyObject *with(PyObject *state, int n, const Py_ssize_t *at, PyObject **values)
{
    PyObject *out = state_type->tp_alloc(state_type, n_items);
    if (out == NULL) {
        for (int i = 0; i < n; i++)
            Py_XDECREF(values[i]);
        return NULL;
    }
    for (Py_ssize_t i = 0; i < n_items; i++) {
        PyObject *value = NULL;
        for (int k = 0; k < n; k++)
            if (at[k] == i)
                value = values[k];
        PyTuple_SET_ITEM(out, i, value ? value : Py_NewRef(PyTuple_GET_ITEM(state, i)));
    }
    return out;
}

/* A pair with item ``seat`` of ``pair`` or-ed with ``set`` and and-ed with ~``clear``. */
static PyObject *pair_with(PyObject *pair, long seat, uint64_t set, uint64_t clear)
{
    uint64_t mask = PyLong_AsUnsignedLongLong(PyTuple_GET_ITEM(pair, seat));
    if (mask == (uint64_t)-1 && PyErr_Occurred())
        return NULL;
    PyObject *value = PyLong_FromUnsignedLongLong((mask | set) & ~clear);
    if (value == NULL)
        return NULL;
    PyObject *other = PyTuple_GET_ITEM(pair, 1 - seat);
    PyObject *out = seat == 0 ? PyTuple_Pack(2, value, other) : PyTuple_Pack(2, other, value);
    Py_DECREF(value);
    return out;
}

static int is_pair(PyObject *value)
{
    return PyTuple_Check(value) && PyTuple_GET_SIZE(value) == 2;
}

#define fall_back(args) PyObject_Vectorcall(fall, (args), 2, NULL)

static PyObject *play(PyObject *const *args, PyObject *fall)
{
    PyObject *state = args[0], *action = args[1];
    if (Py_TYPE(state) != state_type || PyTuple_GET_SIZE(state) != n_items)
        return fall_back(args);
    PyObject *phase = PyTuple_GET_ITEM(state, field[F_PHASE]);
    PyObject *hands = PyTuple_GET_ITEM(state, field[F_HANDS]);
    PyObject *pile = PyTuple_GET_ITEM(state, field[F_PILE]);
    PyObject *deck = PyTuple_GET_ITEM(state, field[F_DECK]);
    PyObject *known = PyTuple_GET_ITEM(state, field[F_KNOWN]);
    long seat = PyLong_AsLong(PyTuple_GET_ITEM(state, field[F_TO_ACT]));
    long stock_pos = PyLong_AsLong(PyTuple_GET_ITEM(state, field[F_STOCK_POS]));
    if (PyErr_Occurred())
        PyErr_Clear();
    if ((seat != 0 && seat != 1) || !is_pair(hands) || !is_pair(known) || !PyTuple_Check(pile)
        || !PyTuple_Check(deck) || stock_pos < 0 || stock_pos > PyTuple_GET_SIZE(deck))
        return fall_back(args);
    Py_ssize_t pile_size = PyTuple_GET_SIZE(pile);
    if (action == draw_stock && phase == p_draw && stock_pos < PyTuple_GET_SIZE(deck)) {
        long card = PyLong_AsLong(PyTuple_GET_ITEM(deck, stock_pos));
        if (card < 0 || card > 51)
            return PyErr_Clear(), fall_back(args);
        PyObject *values[4] = {pair_with(hands, seat, ((uint64_t)1) << card, 0),
                               PyLong_FromLong(stock_pos + 1), Py_NewRef(p_discard),
                               Py_NewRef(minus_one)};
        const Py_ssize_t at[4] = {field[F_HANDS], field[F_STOCK_POS], field[F_PHASE],
                                  field[F_TAKEN]};
        if (values[0] == NULL || values[1] == NULL) {
            for (int i = 0; i < 4; i++)
                Py_XDECREF(values[i]);
            return NULL;
        }
        return with(state, 4, at, values);
    }
    if (action == take_discard && phase == p_draw && pile_size > 0) {
        PyObject *card_obj = PyTuple_GET_ITEM(pile, pile_size - 1);
        long card = PyLong_AsLong(card_obj);
        if (card < 0 || card > 51)
            return PyErr_Clear(), fall_back(args);
        uint64_t bit = ((uint64_t)1) << card;
        PyObject *values[5] = {pair_with(hands, seat, bit, 0),
                               PyTuple_GetSlice(pile, 0, pile_size - 1), Py_NewRef(p_discard),
                               Py_NewRef(card_obj), pair_with(known, seat, bit, 0)};
        const Py_ssize_t at[5] = {field[F_HANDS], field[F_PILE], field[F_PHASE], field[F_TAKEN],
                                  field[F_KNOWN]};
        if (values[0] == NULL || values[1] == NULL || values[4] == NULL) {
            for (int i = 0; i < 5; i++)
                Py_XDECREF(values[i]);
            return NULL;
        }
        return with(state, 5, at, values);
    }
    if (Py_TYPE(action) != (PyTypeObject *)discard_type || phase != p_discard)
        return fall_back(args);
    /* a discard: legal when the card is in the hand and was not just taken */
    PyObject *card = PyObject_GetAttr(action, s_card);
    PyObject *index_obj = card == NULL ? NULL : PyObject_GetAttr(card, s_index);
    Py_XDECREF(card);
    long index = index_obj == NULL ? -1 : PyLong_AsLong(index_obj);
    long taken = PyLong_AsLong(PyTuple_GET_ITEM(state, field[F_TAKEN]));
    long turn = PyLong_AsLong(PyTuple_GET_ITEM(state, field[F_TURN]));
    PyObject *cap_obj = PyObject_GetAttr(PyTuple_GET_ITEM(state, field[F_RULES]), s_turn_cap);
    long cap = cap_obj == NULL ? -1 : PyLong_AsLong(cap_obj);
    Py_XDECREF(cap_obj);
    uint64_t hand = PyLong_AsUnsignedLongLong(PyTuple_GET_ITEM(hands, seat));
    if (PyErr_Occurred() || index < 0 || index > 51 || !(hand >> index & 1) || index == taken
        || PyTuple_GET_SIZE(deck) - stock_pos <= wall || turn + 1 >= cap) {
        PyErr_Clear();
        Py_XDECREF(index_obj);
        return fall_back(args);
    }
    uint64_t bit = ((uint64_t)1) << index;
    PyObject *new_pile = PyTuple_New(pile_size + 1);
    if (new_pile == NULL) {
        Py_DECREF(index_obj);
        return NULL;
    }
    for (Py_ssize_t i = 0; i < pile_size; i++)
        PyTuple_SET_ITEM(new_pile, i, Py_NewRef(PyTuple_GET_ITEM(pile, i)));
    PyTuple_SET_ITEM(new_pile, pile_size, index_obj); /* the reference is the pile's now */
    PyObject *values[7] = {pair_with(hands, seat, 0, bit), pair_with(known, seat, 0, bit),
                           new_pile, Py_NewRef(p_draw), PyLong_FromLong(1 - seat),
                           Py_NewRef(minus_one), PyLong_FromLong(turn + 1)};
    const Py_ssize_t at[7] = {field[F_HANDS], field[F_KNOWN], field[F_PILE], field[F_PHASE],
                              field[F_TO_ACT], field[F_TAKEN], field[F_TURN]};
    for (int i = 0; i < 7; i++)
        if (values[i] == NULL) {
            for (int k = 0; k < 7; k++)
                Py_XDECREF(values[k]);
            return NULL;
        }
    return with(state, 7, at, values);
}

static int arguments(Py_ssize_t nargs)
{
    if (!ready) {
        PyErr_SetString(PyExc_RuntimeError, "apply: setup() was not called");
        return -1;
    }
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "apply takes 2 arguments (state, action)");
        return -1;
    }
    return 0;
}

static PyObject *apply(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    return arguments(nargs) < 0 ? NULL : play(args, fallback);
}

static PyObject *apply_unchecked(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    return arguments(nargs) < 0 ? NULL : play(args, fallback_unchecked);
}

static PyMethodDef methods[] = {
    {"setup", setup, METH_VARARGS, "Set the state class, fields, moves and the fallback."},
    {"apply", (PyCFunction)(void (*)(void))apply, METH_FASTCALL,
     "apply(state, action): the next state (see referee/rules/moves.py)."},
    {"apply_unchecked", (PyCFunction)(void (*)(void))apply_unchecked, METH_FASTCALL,
     "apply_unchecked(state, action): apply whose fallback does not check."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "referee.rules._moves",
    "apply's common moves, compiled (see referee/rules/moves.py).", -1, methods,
};

PyMODINIT_FUNC PyInit__moves(void) { return PyModule_Create(&module); }
