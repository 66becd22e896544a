/* The request writer of referee/match/request.py, compiled: the same bytes, written in C.
 *
 * request.py knows the message: it builds every fixed fragment (map headers, keys, the packed
 * text of each card and of each interned action, the runs of fields fixed per phase, seat and
 * dealer) and hands them to setup(), with the positions of the fields of HandState (a
 * NamedTuple, read here by index) and its own pure-Python writer. This file only knows the
 * order in which the fragments and the variable fields are laid down, the msgpack forms of
 * integers and array headers, and the card masks' bit order. Anything outside what it knows
 * (an integer beyond int64, a phase or an action it was not given, a card index out of range,
 * a sequence that is not a tuple or list, keyword arguments) goes to the Python writer with
 * the very same arguments, so results and errors are the Python writer's own.
 *
 * tests/match/test_request.py checks it byte for byte against the Python writer and the
 * general encoder; docs/performance.md says what it saves.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

typedef struct {
    char *p;
    Py_ssize_t n;
} frag;

#define N_CARDS 52
#define MAX_PHASES 8
#define ACTION_SLOTS 512 /* a power of two, well above the ~108 interned actions */
#define STACK_BUFFER 4096

static int ready = 0;
static PyObject *fallback = NULL;
static frag head, head_events, nil, k_pile, k_stock, k_opp_size, k_opp_known, k_knock, k_mult,
    k_turn, k_scores, k_taken, k_time_left, k_bank, k_events;
static frag card[N_CARDS];
static Py_ssize_t card_max = 0;
static int n_phases = 0;
static PyObject *phase_obj[MAX_PHASES];
static frag phase_decision[MAX_PHASES];
static frag phase_view[MAX_PHASES][2][2];
static PyObject *action_key[ACTION_SLOTS];
static frag action_val[ACTION_SLOTS];
static Py_ssize_t fixed_max = 0; /* every fixed fragment of one request, summed at its longest */

/* Positions in HandState of the fields read here (setup's "fields", in this order). */
enum { F_DEALER, F_DECK, F_HANDS, F_STOCK_POS, F_PILE, F_PHASE, F_TO_ACT, F_TAKEN, F_KNOWN,
       F_TURN, F_KNOCK_LIMIT, F_MULTIPLIER, F_SCORES, N_FIELDS };
static Py_ssize_t field[N_FIELDS];
static Py_ssize_t state_min_size = 0;

static int copy_frag(PyObject *value, frag *out, const char *what)
{
    if (!PyBytes_Check(value)) {
        PyErr_Format(PyExc_TypeError, "setup: %s must be bytes", what);
        return -1;
    }
    Py_ssize_t n = PyBytes_GET_SIZE(value);
    char *p = PyMem_Malloc(n ? n : 1);
    if (p == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    memcpy(p, PyBytes_AS_STRING(value), n);
    out->p = p;
    out->n = n;
    return 0;
}

static int table_frag(PyObject *tables, const char *key, frag *out)
{
    PyObject *value = PyDict_GetItemString(tables, key); /* borrowed */
    if (value == NULL) {
        PyErr_Format(PyExc_KeyError, "setup: no %s", key);
        return -1;
    }
    return copy_frag(value, out, key);
}

static size_t slot_of(PyObject *key)
{
    uint64_t h = (uint64_t)(uintptr_t)key * 0x9E3779B97F4A7C15ull;
    return (size_t)(h >> 55); /* the top 9 bits: 512 slots */
}

static frag *action_frag(PyObject *action)
{
    size_t slot = slot_of(action);
    for (;;) {
        PyObject *key = action_key[slot];
        if (key == action)
            return &action_val[slot];
        if (key == NULL)
            return NULL;
        slot = (slot + 1) & (ACTION_SLOTS - 1);
    }
}

/* setup(tables: dict, fallback: callable) -> None; once per process. */
static PyObject *setup(PyObject *self, PyObject *args)
{
    PyObject *tables, *fb;
    if (!PyArg_ParseTuple(args, "O!O:setup", &PyDict_Type, &tables, &fb))
        return NULL;
    if (ready) {
        PyErr_SetString(PyExc_RuntimeError, "setup: the writer is set up already");
        return NULL;
    }
    struct { const char *key; frag *out; } named[] = {
        {"head", &head}, {"head_events", &head_events}, {"nil", &nil}, {"k_pile", &k_pile},
        {"k_stock", &k_stock}, {"k_opp_size", &k_opp_size}, {"k_opp_known", &k_opp_known},
        {"k_knock", &k_knock}, {"k_mult", &k_mult}, {"k_turn", &k_turn},
        {"k_scores", &k_scores}, {"k_taken", &k_taken}, {"k_time_left", &k_time_left},
        {"k_bank", &k_bank}, {"k_events", &k_events},
    };
    for (size_t i = 0; i < sizeof named / sizeof named[0]; i++)
        if (table_frag(tables, named[i].key, named[i].out) < 0)
            return NULL;

    PyObject *cards = PyDict_GetItemString(tables, "cards");
    if (cards == NULL || !PyTuple_Check(cards) || PyTuple_GET_SIZE(cards) != N_CARDS) {
        PyErr_SetString(PyExc_TypeError, "setup: cards must be a tuple of 52 bytes");
        return NULL;
    }
    for (int i = 0; i < N_CARDS; i++) {
        if (copy_frag(PyTuple_GET_ITEM(cards, i), &card[i], "a card") < 0)
            return NULL;
        if (card[i].n > card_max)
            card_max = card[i].n;
    }

    PyObject *phases = PyDict_GetItemString(tables, "phases");
    if (phases == NULL || !PyTuple_Check(phases) || PyTuple_GET_SIZE(phases) > MAX_PHASES) {
        PyErr_SetString(PyExc_TypeError, "setup: phases must be a tuple (at most 8)");
        return NULL;
    }
    Py_ssize_t decision_max = 0, view_max = 0;
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(phases); i++) {
        PyObject *phase, *decision, *view;
        if (!PyArg_ParseTuple(PyTuple_GET_ITEM(phases, i), "OSO!:phase", &phase, &decision,
                              &PyTuple_Type, &view))
            return NULL;
        if (copy_frag(decision, &phase_decision[i], "a phase's decision") < 0)
            return NULL;
        if (PyTuple_GET_SIZE(view) != 2) {
            PyErr_SetString(PyExc_TypeError, "setup: a phase's view is 2 x 2 bytes");
            return NULL;
        }
        for (int seat = 0; seat < 2; seat++) {
            PyObject *row = PyTuple_GET_ITEM(view, seat);
            if (!PyTuple_Check(row) || PyTuple_GET_SIZE(row) != 2) {
                PyErr_SetString(PyExc_TypeError, "setup: a phase's view is 2 x 2 bytes");
                return NULL;
            }
            for (int dealer = 0; dealer < 2; dealer++) {
                frag *f = &phase_view[i][seat][dealer];
                if (copy_frag(PyTuple_GET_ITEM(row, dealer), f, "a phase's view") < 0)
                    return NULL;
                if (f->n > view_max)
                    view_max = f->n;
            }
        }
        if (phase_decision[i].n > decision_max)
            decision_max = phase_decision[i].n;
        Py_INCREF(phase);
        phase_obj[i] = phase;
        n_phases = (int)i + 1;
    }

    PyObject *actions = PyDict_GetItemString(tables, "actions");
    if (actions == NULL || !PyTuple_Check(actions) ||
        PyTuple_GET_SIZE(actions) >= ACTION_SLOTS / 2) {
        PyErr_SetString(PyExc_TypeError, "setup: actions must be a tuple of (action, bytes)");
        return NULL;
    }
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(actions); i++) {
        PyObject *action, *packed;
        if (!PyArg_ParseTuple(PyTuple_GET_ITEM(actions, i), "OS:action", &action, &packed))
            return NULL;
        if (action_frag(action) != NULL)
            continue;
        size_t slot = slot_of(action);
        while (action_key[slot] != NULL)
            slot = (slot + 1) & (ACTION_SLOTS - 1);
        if (copy_frag(packed, &action_val[slot], "an action") < 0)
            return NULL;
        Py_INCREF(action); /* kept alive: its identity is its key */
        action_key[slot] = action;
    }

    PyObject *fields = PyDict_GetItemString(tables, "fields");
    if (fields == NULL || !PyTuple_Check(fields) || PyTuple_GET_SIZE(fields) != N_FIELDS) {
        PyErr_Format(PyExc_TypeError, "setup: fields must be a tuple of %d positions", N_FIELDS);
        return NULL;
    }
    for (int i = 0; i < N_FIELDS; i++) {
        Py_ssize_t at = PyLong_AsSsize_t(PyTuple_GET_ITEM(fields, i));
        if (at < 0) {
            if (!PyErr_Occurred())
                PyErr_SetString(PyExc_ValueError, "setup: a field position is negative");
            return NULL;
        }
        field[i] = at;
        if (at + 1 > state_min_size)
            state_min_size = at + 1;
    }

    fixed_max = head_events.n + decision_max + view_max + k_pile.n + k_stock.n + k_opp_size.n +
                k_opp_known.n + k_knock.n + k_mult.n + k_turn.n + k_scores.n + k_taken.n +
                k_time_left.n + k_bank.n + k_events.n + nil.n + card_max;
    Py_INCREF(fb);
    fallback = fb;
    ready = 1;
    Py_RETURN_NONE;
}

/* An int64 from a Python int; 0 (and no exception) if it is not one or does not fit. */
static int as_i64(PyObject *value, long long *out)
{
    if (!PyLong_Check(value))
        return 0;
    int overflow;
    long long v = PyLong_AsLongLongAndOverflow(value, &overflow);
    if (overflow || (v == -1 && PyErr_Occurred())) {
        PyErr_Clear();
        return 0;
    }
    *out = v;
    return 1;
}

/* A card mask (52 bits) from a Python int; 0 if it is not one. */
static int as_mask(PyObject *value, uint64_t *out)
{
    long long v;
    if (!as_i64(value, &v) || v < 0 || v >= (1LL << N_CARDS))
        return 0;
    *out = (uint64_t)v;
    return 1;
}

/* The items of a tuple or a list; 0 if it is neither. */
static int items_of(PyObject *seq, Py_ssize_t *n, PyObject ***items)
{
    if (PyTuple_Check(seq)) {
        *n = PyTuple_GET_SIZE(seq);
        *items = ((PyTupleObject *)seq)->ob_item;
    } else if (PyList_Check(seq)) {
        *n = PyList_GET_SIZE(seq);
        *items = ((PyListObject *)seq)->ob_item;
    } else
        return 0;
    return 1;
}

static char *put(char *w, const frag *f)
{
    memcpy(w, f->p, f->n);
    return w + f->n;
}

static char *put_be(char *w, uint64_t v, int bytes)
{
    for (int i = bytes - 1; i >= 0; i--)
        *w++ = (char)(v >> (8 * i));
    return w;
}

/* The smallest msgpack form of an integer, as msgpack's own packer chooses it. */
static char *put_int(char *w, long long v)
{
    if (v >= 0) {
        if (v < 128)
            *w++ = (char)v;
        else if (v < 256) {
            *w++ = (char)0xcc;
            w = put_be(w, (uint64_t)v, 1);
        } else if (v < 65536) {
            *w++ = (char)0xcd;
            w = put_be(w, (uint64_t)v, 2);
        } else if (v < 4294967296LL) {
            *w++ = (char)0xce;
            w = put_be(w, (uint64_t)v, 4);
        } else {
            *w++ = (char)0xcf;
            w = put_be(w, (uint64_t)v, 8);
        }
    } else if (v >= -32)
        *w++ = (char)(uint8_t)v;
    else if (v >= -128) {
        *w++ = (char)0xd0;
        w = put_be(w, (uint64_t)v, 1);
    } else if (v >= -32768) {
        *w++ = (char)0xd1;
        w = put_be(w, (uint64_t)v, 2);
    } else if (v >= -2147483648LL) {
        *w++ = (char)0xd2;
        w = put_be(w, (uint64_t)v, 4);
    } else {
        *w++ = (char)0xd3;
        w = put_be(w, (uint64_t)v, 8);
    }
    return w;
}

static char *put_array_header(char *w, Py_ssize_t n)
{
    if (n < 16) {
        *w++ = (char)(0x90 | n);
        return w;
    }
    *w++ = (char)0xdc;
    return put_be(w, (uint64_t)n, 2);
}

/* The cards of a mask in index order: its array header, then each card's packed text. */
static char *put_cards(char *w, uint64_t mask)
{
    w = put_array_header(w, __builtin_popcountll(mask));
    while (mask) {
        w = put(w, &card[__builtin_ctzll(mask)]);
        mask &= mask - 1;
    }
    return w;
}

/* request_bytes(state, legal, request_id, time_left_ms, bank_ms, events=()) -> bytes */
static PyObject *request_bytes(PyObject *self, PyObject *const *args, size_t nargsf,
                               PyObject *kwnames)
{
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    if (!ready) {
        PyErr_SetString(PyExc_RuntimeError, "request_bytes: setup() was not called");
        return NULL;
    }
    if (kwnames != NULL || nargs < 5 || nargs > 6)
        goto general;
    PyObject *state = args[0], *legal = args[1], *events = nargs == 6 ? args[5] : NULL;
    if (!PyTuple_Check(state) || PyTuple_GET_SIZE(state) < state_min_size)
        goto general;
#define FIELD(i) PyTuple_GET_ITEM(state, field[i])

    long long seat, dealer, request_id, time_left, bank, limit, multiplier, turn, s0, s1, taken,
        stock_pos;
    if (!as_i64(FIELD(F_TO_ACT), &seat) || (seat != 0 && seat != 1))
        goto general;
    if (!as_i64(FIELD(F_DEALER), &dealer) || (dealer != 0 && dealer != 1))
        goto general;
    if (!as_i64(args[2], &request_id) || !as_i64(args[3], &time_left) ||
        !as_i64(args[4], &bank))
        goto general;
    if (!as_i64(FIELD(F_KNOCK_LIMIT), &limit) || !as_i64(FIELD(F_MULTIPLIER), &multiplier) ||
        !as_i64(FIELD(F_TURN), &turn) || !as_i64(FIELD(F_TAKEN), &taken) ||
        !as_i64(FIELD(F_STOCK_POS), &stock_pos))
        goto general;
    if (taken >= N_CARDS)
        goto general;

    PyObject *phase = FIELD(F_PHASE);
    int p = 0;
    while (p < n_phases && phase_obj[p] != phase)
        p++;
    if (p == n_phases)
        goto general;

    PyObject *hands = FIELD(F_HANDS), *known = FIELD(F_KNOWN), *scores = FIELD(F_SCORES);
    if (!PyTuple_Check(hands) || PyTuple_GET_SIZE(hands) != 2 || !PyTuple_Check(known) ||
        PyTuple_GET_SIZE(known) != 2 || !PyTuple_Check(scores) || PyTuple_GET_SIZE(scores) != 2)
        goto general;
    uint64_t hand, opponent, opp_known;
    if (!as_mask(PyTuple_GET_ITEM(hands, seat), &hand) ||
        !as_mask(PyTuple_GET_ITEM(hands, 1 - seat), &opponent) ||
        !as_mask(PyTuple_GET_ITEM(known, 1 - seat), &opp_known))
        goto general;
    if (!as_i64(PyTuple_GET_ITEM(scores, 0), &s0) || !as_i64(PyTuple_GET_ITEM(scores, 1), &s1))
        goto general;

    PyObject *deck = FIELD(F_DECK), *pile = FIELD(F_PILE);
    if (!PyTuple_Check(deck) || !PyTuple_Check(pile))
        goto general;
    long long stock = (long long)PyTuple_GET_SIZE(deck) - stock_pos;
    if (stock < 0 || stock >= 256) /* the Python writer indexes a 256-entry table with it */
        goto general;
    Py_ssize_t pile_n = PyTuple_GET_SIZE(pile);
    if (pile_n >= 64)
        goto general;

    Py_ssize_t legal_n, events_n = 0;
    PyObject **legal_items, **event_items = NULL;
    if (!items_of(legal, &legal_n, &legal_items) || legal_n >= 64)
        goto general;
    if (events != NULL && (!items_of(events, &events_n, &event_items) || events_n >= 65536))
        goto general;

    /* An upper bound of the length: the fixed fragments, 9 bytes per integer, 3 per array
     * header, the cards of two masks and of the pile. */
    Py_ssize_t bound = fixed_max + 12 * 9 + 6 * 3 + (2 * N_CARDS + 64) * card_max;
    for (Py_ssize_t i = 0; i < legal_n; i++) {
        frag *f = action_frag(legal_items[i]);
        if (f == NULL)
            goto general; /* not interned: the Python writer packs it the general way */
        bound += f->n;
    }
    for (Py_ssize_t i = 0; i < pile_n; i++) {
        long long c;
        if (!as_i64(PyTuple_GET_ITEM(pile, i), &c) || c < 0 || c >= N_CARDS)
            goto general;
    }
    for (Py_ssize_t i = 0; i < events_n; i++) {
        if (!PyBytes_Check(event_items[i]))
            goto general;
        bound += PyBytes_GET_SIZE(event_items[i]);
    }

    char stack[STACK_BUFFER];
    char *buffer = bound <= STACK_BUFFER ? stack : PyMem_Malloc(bound);
    if (buffer == NULL)
        return PyErr_NoMemory();
    char *w = buffer;
    w = put(w, events_n ? &head_events : &head);
    w = put_int(w, request_id);
    w = put(w, &phase_decision[p]);
    w = put_array_header(w, legal_n);
    for (Py_ssize_t i = 0; i < legal_n; i++)
        w = put(w, action_frag(legal_items[i]));
    w = put(w, &phase_view[p][seat][dealer]);
    w = put_cards(w, hand);
    w = put(w, &k_pile);
    w = put_array_header(w, pile_n);
    for (Py_ssize_t i = 0; i < pile_n; i++)
        w = put(w, &card[PyLong_AsLong(PyTuple_GET_ITEM(pile, i))]);
    w = put(w, &k_stock);
    w = put_int(w, stock);
    w = put(w, &k_opp_size);
    w = put_int(w, __builtin_popcountll(opponent));
    w = put(w, &k_opp_known);
    w = put_cards(w, opp_known);
    w = put(w, &k_knock);
    w = put_int(w, limit);
    w = put(w, &k_mult);
    w = put_int(w, multiplier);
    w = put(w, &k_turn);
    w = put_int(w, turn);
    w = put(w, &k_scores);
    w = put_int(w, s0);
    w = put_int(w, s1);
    w = put(w, &k_taken);
    w = put(w, taken >= 0 ? &card[taken] : &nil);
    w = put(w, &k_time_left);
    w = put_int(w, time_left);
    w = put(w, &k_bank);
    w = put_int(w, bank);
    if (events_n) {
        w = put(w, &k_events);
        w = put_array_header(w, events_n);
        for (Py_ssize_t i = 0; i < events_n; i++) {
            memcpy(w, PyBytes_AS_STRING(event_items[i]), PyBytes_GET_SIZE(event_items[i]));
            w += PyBytes_GET_SIZE(event_items[i]);
        }
    }
    PyObject *result = PyBytes_FromStringAndSize(buffer, w - buffer);
    if (buffer != stack)
        PyMem_Free(buffer);
    return result;
#undef FIELD

general:
    return PyObject_Vectorcall(fallback, args, nargsf, kwnames);
}

static PyMethodDef methods[] = {
    {"setup", setup, METH_VARARGS,
     "setup(tables, fallback): the fragments, HandState's field positions and the Python "
     "writer (see referee/match/request.py)."},
    {"request_bytes", (PyCFunction)(void (*)(void))request_bytes,
     METH_FASTCALL | METH_KEYWORDS,
     "request_bytes(state, legal, request_id, time_left_ms, bank_ms, events=()): the encoded "
     "request, as referee.match.request's Python writer gives it."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_request",
    "The request writer of referee.match.request, compiled (see that module).", -1, methods,
};

PyMODINIT_FUNC PyInit__request(void)
{
    return PyModule_Create(&module);
}
