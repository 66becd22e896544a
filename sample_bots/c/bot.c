/*
 * A starter gin-referee bot in C: copy this file and change decide().
 *
 * Build:  make            (needs libzmq3-dev and libmsgpack-dev from Debian)
 * Run:    the referee starts it with GIN_REFEREE_ENDPOINT and GIN_REFEREE_TOKEN set, e.g.
 *         gin-referee match ./sample_bots/c/gin-bot "python3 -m sample_bots.random_bot"
 *         Over tcp:// the referee requires CURVE: set GIN_REFEREE_SERVER_KEY (the referee's
 *         public key) and GIN_BOT_KEY_FILE (this bot's NAME.key_secret from
 *         `gin-referee keygen --bot NAME`), or GIN_BOT_PUBLIC_KEY and GIN_BOT_SECRET_KEY
 *         (docs/protocol.md, "Connecting over the network").
 *
 * Shape of the program (docs/protocol.md is the reference for every message):
 *   1. connect one DEALER socket to the endpoint (never bind, never REQ);
 *   2. send hello {type, protocol_version, name, token, multi_match: true};
 *   3. loop: read one frame = one msgpack map, dispatch on its "type":
 *        request   -> parse legal actions and the view, decide(), send action (same request_id)
 *        ping      -> pong (same nonce)
 *        welcome   -> note whether multi_match was granted
 *        match_end -> bye, exit 0 (granted multi_match: stay for the next match_start)
 *        bye       -> exit 0
 *        reject    -> print the reason, exit 2
 *        error     -> print it (something we sent was dropped) and carry on
 *        anything else (match_start, hand_start, event, hand_end, game_end, unknown types)
 *                  -> ignore; a bot that tracks the game reads them here.
 *
 * Strategy (deterministic, legal by construction: it always answers with one entry of
 * `legal`): big gin > knock > discard the card that fits the hand worst; take the discard
 * only when it fits the hand, otherwise draw from the stock.
 */
#include <msgpack.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zmq.h>

#define BOT_NAME "c-starter"
#define IDLE_LIMIT_MS 60000 /* give up if the referee is silent this long */
#define MAX_FRAME 65536     /* the referee never sends more; bigger frames are dropped */
#define MAX_LEGAL 64        /* a request lists at most 11 discards + 11 knocks + big gin */
#define MAX_HAND 11

/* ------------------------------------------------------------------ parsed messages */

enum kind { PASS_UPCARD, TAKE_DISCARD, DRAW_STOCK, DISCARD, KNOCK, BIG_GIN, UNKNOWN_KIND };
static const char *const KIND_NAMES[] = {"pass_upcard", "take_discard", "draw_stock",
                                         "discard",     "knock",        "big_gin"};

typedef struct {
    enum kind kind;
    char card[3]; /* "" when the action has no card, else e.g. "Td" */
} action_t;

typedef struct {
    uint64_t request_id;
    int n_legal;
    action_t legal[MAX_LEGAL];
    int n_hand;
    char hand[MAX_HAND][3];
    char top_discard[3]; /* "" when the discard pile is empty */
} request_t;

/* ------------------------------------------------------------------ strategy */

static const char RANKS[] = "A23456789TJQK";

/* 0 (ace) .. 12 (king); cards come from the referee, so the rank is always one of RANKS. */
static int rank_of(const char *card) { return (int)(strchr(RANKS, card[0]) - RANKS); }

/* Deadwood value: ace 1, number cards their number, faces 10. */
static int points_of(const char *card) {
    int r = rank_of(card) + 1;
    return r > 10 ? 10 : r;
}

/* How well `card` fits the hand: 2 per card of the same rank, 1 per run neighbour. */
static int fit(const char *card, const request_t *rq) {
    int score = 0;
    for (int i = 0; i < rq->n_hand; i++) {
        const char *other = rq->hand[i];
        if (strcmp(other, card) == 0) continue;
        int gap = abs(rank_of(other) - rank_of(card));
        if (gap == 0) score += 2;
        else if (other[1] == card[1] && gap <= 2) score += 1;
    }
    return score;
}

/* Returns the index in rq->legal of the action to play. Change this function. */
static int decide(const request_t *rq) {
    int best = -1, best_cost = 0;
    for (int i = 0; i < rq->n_legal; i++)
        if (rq->legal[i].kind == BIG_GIN) return i;
    for (enum kind k = KNOCK; best < 0 && k >= DISCARD; k--) {
        for (int i = 0; i < rq->n_legal; i++) {
            if (rq->legal[i].kind != k) continue;
            int cost = fit(rq->legal[i].card, rq) * 100 - points_of(rq->legal[i].card);
            if (best < 0 || cost < best_cost) best = i, best_cost = cost;
        }
    }
    if (best >= 0) return best;
    for (int i = 0; i < rq->n_legal; i++)
        if (rq->legal[i].kind == TAKE_DISCARD && rq->top_discard[0] && fit(rq->top_discard, rq) >= 2)
            return i;
    for (int i = 0; i < rq->n_legal; i++)
        if (rq->legal[i].kind == DRAW_STOCK || rq->legal[i].kind == PASS_UPCARD) return i;
    return 0;
}

/* ------------------------------------------------------------------ msgpack helpers */

/* The value under `key` in map `map`, or NULL. */
static const msgpack_object *get(const msgpack_object *map, const char *key) {
    if (map->type != MSGPACK_OBJECT_MAP) return NULL;
    size_t len = strlen(key);
    for (uint32_t i = 0; i < map->via.map.size; i++) {
        const msgpack_object *k = &map->via.map.ptr[i].key;
        if (k->type == MSGPACK_OBJECT_STR && k->via.str.size == len &&
            memcmp(k->via.str.ptr, key, len) == 0)
            return &map->via.map.ptr[i].val;
    }
    return NULL;
}

/* Copies a msgpack str into buf (NUL-terminated, truncated to size-1); "" if not a str. */
static void str_copy(const msgpack_object *o, char *buf, size_t size) {
    size_t n = 0;
    if (o && o->type == MSGPACK_OBJECT_STR) {
        n = o->via.str.size < size - 1 ? o->via.str.size : size - 1;
        memcpy(buf, o->via.str.ptr, n);
    }
    buf[n] = '\0';
}

static int is_type(const msgpack_object *msg, const char *type) {
    char buf[32];
    str_copy(get(msg, "type"), buf, sizeof buf);
    return strcmp(buf, type) == 0;
}

static void pack_str(msgpack_packer *pk, const char *s) {
    size_t n = strlen(s);
    msgpack_pack_str(pk, n);
    msgpack_pack_str_body(pk, s, n);
}

static int parse_request(const msgpack_object *msg, request_t *rq) {
    const msgpack_object *id = get(msg, "request_id"), *legal = get(msg, "legal");
    const msgpack_object *view = get(msg, "view");
    if (!id || id->type != MSGPACK_OBJECT_POSITIVE_INTEGER || !legal ||
        legal->type != MSGPACK_OBJECT_ARRAY || !view)
        return -1;
    rq->request_id = id->via.u64;
    rq->n_legal = 0;
    for (uint32_t i = 0; i < legal->via.array.size && rq->n_legal < MAX_LEGAL; i++) {
        action_t *a = &rq->legal[rq->n_legal++];
        char kind[16];
        str_copy(get(&legal->via.array.ptr[i], "kind"), kind, sizeof kind);
        a->kind = UNKNOWN_KIND;
        for (int k = 0; k < UNKNOWN_KIND; k++)
            if (strcmp(kind, KIND_NAMES[k]) == 0) a->kind = (enum kind)k;
        str_copy(get(&legal->via.array.ptr[i], "card"), a->card, sizeof a->card);
    }
    const msgpack_object *hand = get(view, "hand"), *pile = get(view, "discard_pile");
    rq->n_hand = 0;
    if (hand && hand->type == MSGPACK_OBJECT_ARRAY)
        for (uint32_t i = 0; i < hand->via.array.size && rq->n_hand < MAX_HAND; i++)
            str_copy(&hand->via.array.ptr[i], rq->hand[rq->n_hand++], 3);
    rq->top_discard[0] = '\0';
    if (pile && pile->type == MSGPACK_OBJECT_ARRAY && pile->via.array.size > 0)
        str_copy(&pile->via.array.ptr[pile->via.array.size - 1], rq->top_discard, 3);
    return rq->n_legal > 0 ? 0 : -1;
}

/* ------------------------------------------------------------------ connection */

static void *sock;
static msgpack_sbuffer out; /* one buffer for every message we send, cleared each time */
static msgpack_packer pk;

/* Starts a message: a map of `fields` entries, the first being "type": type. */
static void begin(uint32_t fields, const char *type) {
    msgpack_sbuffer_clear(&out);
    msgpack_pack_map(&pk, fields);
    pack_str(&pk, "type"), pack_str(&pk, type);
}

/* Sends the message begun with begin(): one ZeroMQ frame. */
static void send_message(void) {
    if (zmq_send(sock, out.data, out.size, 0) < 0)
        fprintf(stderr, BOT_NAME ": send failed: %s\n", zmq_strerror(zmq_errno()));
}

static void send_hello(const char *token) {
    begin(5, "hello");
    pack_str(&pk, "protocol_version"), msgpack_pack_int(&pk, 1);
    pack_str(&pk, "name"), pack_str(&pk, BOT_NAME);
    pack_str(&pk, "token"), pack_str(&pk, token);
    /* several matches per connection: decide() keeps no state from one match to the next */
    pack_str(&pk, "multi_match"), msgpack_pack_true(&pk);
    send_message();
}

static void send_action(uint64_t request_id, const action_t *a) {
    begin(3, "action");
    pack_str(&pk, "request_id"), msgpack_pack_uint64(&pk, request_id);
    pack_str(&pk, "action");
    /* A legal entry is a valid answer as it is: kind, and card where the entry has one. */
    msgpack_pack_map(&pk, a->card[0] ? 2 : 1);
    pack_str(&pk, "kind"), pack_str(&pk, KIND_NAMES[a->kind]);
    if (a->card[0]) pack_str(&pk, "card"), pack_str(&pk, a->card);
    send_message();
}

/* A message with just a type, or a type and one field copied from what we received. */
static void send_simple(const char *type, const char *key, const msgpack_object *value) {
    begin(key ? 2 : 1, type);
    if (key) pack_str(&pk, key), msgpack_pack_object(&pk, *value);
    send_message();
}

static int multi_match; /* the welcome granted it: stay connected after match_end */

/* Handles one message; returns -1 to keep going, else the exit status. */
static int handle(const msgpack_object *msg) {
    if (is_type(msg, "welcome")) {
        const msgpack_object *granted = get(msg, "multi_match");
        multi_match = granted && granted->type == MSGPACK_OBJECT_BOOLEAN && granted->via.boolean;
    } else if (is_type(msg, "request")) {
        static request_t rq; /* static: keeps the stack small */
        if (parse_request(msg, &rq) != 0) {
            fprintf(stderr, BOT_NAME ": a request without request_id or legal actions\n");
            return -1;
        }
        send_action(rq.request_id, &rq.legal[decide(&rq)]);
    } else if (is_type(msg, "ping")) {
        const msgpack_object *nonce = get(msg, "nonce");
        if (nonce) send_simple("pong", "nonce", nonce);
    } else if (is_type(msg, "match_end")) {
        char result[16];
        str_copy(get(msg, "result"), result, sizeof result);
        fprintf(stderr, BOT_NAME ": match over: %s\n", result);
        if (multi_match) return -1; /* wait (answering pings) for match_start or bye */
        send_simple("bye", NULL, NULL);
        return 0;
    } else if (is_type(msg, "bye")) {
        return 0;
    } else if (is_type(msg, "reject")) {
        char code[64];
        str_copy(get(msg, "code"), code, sizeof code);
        fprintf(stderr, BOT_NAME ": rejected: %s\n", code);
        return 2;
    } else if (is_type(msg, "error")) {
        char code[64], text[256];
        str_copy(get(msg, "code"), code, sizeof code);
        str_copy(get(msg, "message"), text, sizeof text);
        fprintf(stderr, BOT_NAME ": referee error: %s: %s\n", code, text);
    }
    return -1;
}

/* ------------------------------------------------------------------ CURVE keys */

/* Copy the 40-character Z85 value of `field` (public-key or secret-key) from a ZeroMQ
 * certificate file into out; 0 on success. */
static int cert_key(const char *path, const char *field, char out[41]) {
    FILE *file = fopen(path, "r");
    if (!file) {
        fprintf(stderr, BOT_NAME ": cannot read %s\n", path);
        return -1;
    }
    char line[256], name[32];
    int found = 0;
    while (!found && fgets(line, sizeof line, file))
        found = sscanf(line, " %31[a-z-] = \"%40[^\"]\"", name, out) == 2 && !strcmp(name, field);
    fclose(file);
    if (!found) fprintf(stderr, BOT_NAME ": no %s in %s\n", field, path);
    return found ? 0 : -1;
}

/* Make sock a CURVE client when GIN_REFEREE_SERVER_KEY is set; 0 on success (or no CURVE). */
static int set_curve(void *sock) {
    const char *server = getenv("GIN_REFEREE_SERVER_KEY"), *file = getenv("GIN_BOT_KEY_FILE");
    if (!server) return 0;
    char public_key[41] = "", secret_key[41] = "";
    if (file) {
        if (cert_key(file, "public-key", public_key) || cert_key(file, "secret-key", secret_key))
            return -1;
    } else if (getenv("GIN_BOT_PUBLIC_KEY") && getenv("GIN_BOT_SECRET_KEY")) {
        snprintf(public_key, sizeof public_key, "%s", getenv("GIN_BOT_PUBLIC_KEY"));
        snprintf(secret_key, sizeof secret_key, "%s", getenv("GIN_BOT_SECRET_KEY"));
    }
    /* Z85 keys are 40 characters; zmq_setsockopt takes them with length 40. */
    if (strlen(server) != 40 || strlen(public_key) != 40 || strlen(secret_key) != 40 ||
        zmq_setsockopt(sock, ZMQ_CURVE_SERVERKEY, server, 40) != 0 ||
        zmq_setsockopt(sock, ZMQ_CURVE_PUBLICKEY, public_key, 40) != 0 ||
        zmq_setsockopt(sock, ZMQ_CURVE_SECRETKEY, secret_key, 40) != 0) {
        fprintf(stderr, BOT_NAME ": GIN_REFEREE_SERVER_KEY is set: it and GIN_BOT_KEY_FILE "
                                 "(or GIN_BOT_PUBLIC_KEY and GIN_BOT_SECRET_KEY) must hold "
                                 "40-character Z85 keys\n");
        return -1;
    }
    return 0;
}

int main(void) {
    const char *endpoint = getenv("GIN_REFEREE_ENDPOINT"), *token = getenv("GIN_REFEREE_TOKEN");
    if (!endpoint || !token) {
        fprintf(stderr, BOT_NAME ": GIN_REFEREE_ENDPOINT and GIN_REFEREE_TOKEN must be set\n");
        return 2;
    }
    void *ctx = zmq_ctx_new();
    sock = zmq_socket(ctx, ZMQ_DEALER);
    int linger = 1000, timeout = IDLE_LIMIT_MS; /* linger: let the final bye go out */
    int64_t max_size = MAX_FRAME;
    zmq_setsockopt(sock, ZMQ_LINGER, &linger, sizeof linger);
    zmq_setsockopt(sock, ZMQ_RCVTIMEO, &timeout, sizeof timeout);
    zmq_setsockopt(sock, ZMQ_MAXMSGSIZE, &max_size, sizeof max_size);
    if (set_curve(sock) != 0) return 2;
    if (zmq_connect(sock, endpoint) != 0) {
        fprintf(stderr, BOT_NAME ": cannot connect to %s: %s\n", endpoint, zmq_strerror(zmq_errno()));
        return 1;
    }
    msgpack_sbuffer_init(&out);
    msgpack_packer_init(&pk, &out, msgpack_sbuffer_write);
    send_hello(token);

    static char frame[MAX_FRAME];
    msgpack_unpacked unpacked;
    msgpack_unpacked_init(&unpacked);
    int status = -1;
    while (status < 0) {
        int n = zmq_recv(sock, frame, sizeof frame, 0);
        if (n < 0) {
            fprintf(stderr, BOT_NAME ": no message from the referee for %d ms: %s\n",
                    IDLE_LIMIT_MS, zmq_strerror(zmq_errno()));
            status = 3;
            break;
        }
        if ((size_t)n > sizeof frame) continue; /* truncated: not from a referee */
        size_t offset = 0;
        if (msgpack_unpack_next(&unpacked, frame, (size_t)n, &offset) == MSGPACK_UNPACK_SUCCESS)
            status = handle(&unpacked.data);
    }
    msgpack_unpacked_destroy(&unpacked);
    msgpack_sbuffer_destroy(&out);
    zmq_close(sock);
    zmq_ctx_term(ctx);
    return status;
}
