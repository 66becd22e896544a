/* The meld searches of referee/rules/melds.py, compiled: the same values, found in the same
 * order, for hands of at most 11 cards (melds.py keeps larger masks to itself).
 *
 *   best_packing(mask) -> (covered, value)   melds.py's _python_best_packing
 *   deadwood(mask) -> int                    mask_value(mask) - best_packing(mask)[1]
 *   knock_discards_exact(mask, limit) -> tuple of card indices   _python_knock_discards_exact
 *   best_split(mask) -> (melds, rest)        best_packing's melds (the Meld objects given to
 *                                            setup(), by mask), split as split_packing, and the
 *                                            cards left as a mask (the deadwood)
 *
 * A card's index is suit * 13 + rank (rank 0 is the ace); its value is min(rank + 1, 10).
 * The melds of a hand are listed as melds_in() lists them (sets by rank, a four's own set
 * before its threes; then runs by suit, by first card, then by length) and the packings are
 * walked depth first in the order of melds.py's packings(): the best packing is the first in
 * that order with the greatest value. A branch is cut only when all the cards its melds could
 * still cover are worth no more than the best found so far, so it never holds the first best.
 *
 * Pure: no I/O, no clock, no state. tests/rules/test_compiled_melds.py checks it against the
 * Python functions.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>

#define ROW ((uint64_t)0x1FFF)
#define MAX_CARDS 11
#define MAX_MELDS 128 /* 11 cards hold at most 11 sets and 45 runs */

static PyObject *meld_of_mask = NULL; /* setup(): {mask: Meld} of every meld of the deck */

static int value_of(int index) { int rank = index % 13; return rank < 9 ? rank + 1 : 10; }

static int mask_value(uint64_t mask)
{
    int total = 0;
    for (; mask; mask &= mask - 1)
        total += value_of(__builtin_ctzll(mask));
    return total;
}

static int melds_in(uint64_t mask, uint64_t *out)
{
    uint64_t a = mask & ROW, b = mask >> 13 & ROW, c = mask >> 26 & ROW, d = mask >> 39 & ROW;
    uint64_t threes = (a & b & (c | d)) | (c & d & (a | b));
    int n = 0;
    for (; threes; threes &= threes - 1) {
        int rank = __builtin_ctzll(threes);
        uint64_t column = (uint64_t)1 << rank;
        column |= column << 13 | column << 26 | column << 39;
        uint64_t set = mask & column;
        out[n++] = set;
        if (__builtin_popcountll(set) == 4)
            for (uint64_t m = set; m; m &= m - 1)
                out[n++] = set ^ (m & -m);
    }
    for (int suit = 0; suit < 4; suit++) {
        uint64_t row = mask >> (13 * suit) & ROW;
        if (!(row & row >> 1 & row >> 2))
            continue;
        for (int start = 0; start < 11; start++)
            for (int length = 1; start + length <= 13 && (row >> (start + length - 1) & 1); length++)
                if (length >= 3)
                    out[n++] = ((((uint64_t)1 << length) - 1) << start) << (13 * suit);
    }
    return n;
}

typedef struct {
    int count;
    uint64_t meld[MAX_MELDS];
    int value[MAX_MELDS];
    uint64_t reach[MAX_MELDS + 1]; /* the cards of melds i.. together */
    uint64_t best_covered;
    int best_value;
} Search;

static void prepare(Search *s, uint64_t mask)
{
    s->count = melds_in(mask, s->meld);
    s->reach[s->count] = 0;
    for (int i = s->count - 1; i >= 0; i--) {
        s->value[i] = mask_value(s->meld[i]);
        s->reach[i] = s->reach[i + 1] | s->meld[i];
    }
    s->best_covered = 0;
    s->best_value = 0;
}

static void best_from(Search *s, int start, uint64_t used, int value)
{
    for (int i = start; i < s->count; i++) {
        if (s->meld[i] & used)
            continue;
        if (value + mask_value(s->reach[i] & ~used) <= s->best_value)
            return; /* nothing from here on can beat the best */
        uint64_t covered = used | s->meld[i];
        int total = value + s->value[i];
        if (total > s->best_value) {
            s->best_covered = covered;
            s->best_value = total;
        }
        best_from(s, i + 1, covered, total);
    }
}

typedef struct {
    Search search;
    uint64_t mask;
    int best_without[52];
} Discards;

static void note(Discards *k, uint64_t covered, int value)
{
    for (uint64_t m = k->mask & ~covered; m; m &= m - 1) {
        int index = __builtin_ctzll(m);
        if (value > k->best_without[index])
            k->best_without[index] = value;
    }
}

static void every_from(Discards *k, int start, uint64_t used, int value)
{
    Search *s = &k->search;
    for (int i = start; i < s->count; i++) {
        if (s->meld[i] & used)
            continue;
        uint64_t covered = used | s->meld[i];
        int total = value + s->value[i];
        note(k, covered, total);
        every_from(k, i + 1, covered, total);
    }
}

/* The mask argument: an int of at most MAX_CARDS bits below bit 52. */
static int read_mask(PyObject *arg, uint64_t *mask, const char *who)
{
    if (!PyLong_Check(arg)) {
        PyErr_Format(PyExc_TypeError, "%s: the mask must be an int", who);
        return -1;
    }
    unsigned long long value = PyLong_AsUnsignedLongLong(arg);
    if (value == (unsigned long long)-1 && PyErr_Occurred())
        return -1;
    if (value >> 52 || __builtin_popcountll(value) > MAX_CARDS) {
        PyErr_Format(PyExc_ValueError, "%s: a mask of at most %d cards of 52", who, MAX_CARDS);
        return -1;
    }
    *mask = value;
    return 0;
}

/* The best packing of the cards of mask, into s. */
static void search(Search *s, uint64_t mask)
{
    prepare(s, mask);
    best_from(s, 0, 0, 0);
}

static PyObject *best_packing(PyObject *self, PyObject *arg)
{
    uint64_t mask;
    Search s;
    if (read_mask(arg, &mask, "best_packing") < 0)
        return NULL;
    search(&s, mask);
    return Py_BuildValue("(Ki)", (unsigned long long)s.best_covered, s.best_value);
}

static PyObject *deadwood(PyObject *self, PyObject *arg)
{
    uint64_t mask;
    Search s;
    if (read_mask(arg, &mask, "deadwood") < 0)
        return NULL;
    search(&s, mask);
    return PyLong_FromLong(mask_value(mask) - s.best_value);
}

static PyObject *knock_discards_exact(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "knock_discards_exact(mask, limit)");
        return NULL;
    }
    Discards k;
    if (read_mask(args[0], &k.mask, "knock_discards_exact") < 0)
        return NULL;
    long limit = PyLong_AsLong(args[1]);
    if (limit == -1 && PyErr_Occurred())
        return NULL;
    prepare(&k.search, k.mask);
    for (int i = 0; i < 52; i++)
        k.best_without[i] = -1;
    note(&k, 0, 0); /* the empty packing */
    every_from(&k, 0, 0, 0);
    int total = mask_value(k.mask);
    int found[MAX_CARDS], n = 0;
    for (uint64_t m = k.mask; m; m &= m - 1) {
        int index = __builtin_ctzll(m);
        if (total - value_of(index) - k.best_without[index] <= limit)
            found[n++] = index;
    }
    PyObject *out = PyTuple_New(n);
    if (out == NULL)
        return NULL;
    for (int i = 0; i < n; i++) {
        PyObject *item = PyLong_FromLong(found[i]);
        if (item == NULL) {
            Py_DECREF(out);
            return NULL;
        }
        PyTuple_SET_ITEM(out, i, item);
    }
    return out;
}

/* Whether the cards of rest split into melds with none left over. */
static int splits(uint64_t rest)
{
    if (rest == 0)
        return 1;
    Search s;
    search(&s, rest);
    return s.best_covered == rest;
}

static PyObject *best_split(PyObject *self, PyObject *arg)
{
    uint64_t mask;
    if (read_mask(arg, &mask, "best_split") < 0)
        return NULL;
    Search s;
    search(&s, mask);
    uint64_t remaining = s.best_covered, in_covered[MAX_MELDS], chosen[MAX_CARDS / 3];
    int count = melds_in(s.best_covered, in_covered), n = 0;
    for (int i = 0; i < count && remaining; i++) {
        uint64_t meld = in_covered[i];
        if ((meld & remaining) == meld && splits(remaining & ~meld)) {
            chosen[n++] = meld;
            remaining &= ~meld;
        }
    }
    if (remaining) { /* cannot happen: the packing's own melds split it */
        PyErr_SetString(PyExc_AssertionError, "best_split: the best packing does not split");
        return NULL;
    }
    if (meld_of_mask == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "best_split: setup() was not called");
        return NULL;
    }
    PyObject *found = PyTuple_New(n);
    if (found == NULL)
        return NULL;
    for (int i = 0; i < n; i++) {
        PyObject *key = PyLong_FromUnsignedLongLong(chosen[i]);
        if (key == NULL) {
            Py_DECREF(found);
            return NULL;
        }
        PyObject *meld = PyDict_GetItemWithError(meld_of_mask, key); /* borrowed */
        Py_DECREF(key);
        if (meld == NULL) {
            if (!PyErr_Occurred())
                PyErr_SetString(PyExc_KeyError, "best_split: a meld setup() did not give");
            Py_DECREF(found);
            return NULL;
        }
        PyTuple_SET_ITEM(found, i, Py_NewRef(meld));
    }
    return Py_BuildValue("(NK)", found, (unsigned long long)(mask & ~s.best_covered));
}

static PyObject *setup(PyObject *self, PyObject *table)
{
    if (!PyDict_Check(table)) {
        PyErr_SetString(PyExc_TypeError, "setup: a dict {mask: Meld}");
        return NULL;
    }
    Py_XSETREF(meld_of_mask, Py_NewRef(table));
    Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"setup", setup, METH_O, "The Meld object of each meld's mask, for best_split."},
    {"best_split", best_split, METH_O, "The best packing's melds, in split_packing's order, and the rest."},
    {"best_packing", best_packing, METH_O, "The first packing of greatest value: (covered, value)."},
    {"deadwood", deadwood, METH_O, "The least deadwood of a hand of at most 11 cards."},
    {"knock_discards_exact", (PyCFunction)(void (*)(void))knock_discards_exact, METH_FASTCALL,
     "Indices of the cards whose discard leaves deadwood <= limit."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_melds", NULL, -1, methods};

PyMODINIT_FUNC PyInit__melds(void) { return PyModule_Create(&module); }
