// A starter gin-referee bot in C++17: copy this file and change decide().
//
// Build:  make          (needs g++ and Debian's cppzmq-dev, libzmq3-dev, libmsgpack-cxx-dev)
// Check:  gin-referee check ./sample_bots/cpp/gin-bot-cpp
// Run:    gin-referee match ./sample_bots/cpp/gin-bot-cpp "python3 -m sample_bots.random_bot"
//
// Over tcp:// the referee requires CURVE: set GIN_REFEREE_SERVER_KEY (the referee's public
// key) and GIN_BOT_KEY_FILE (this bot's NAME.key_secret from `gin-referee keygen --bot NAME`),
// or GIN_BOT_PUBLIC_KEY and GIN_BOT_SECRET_KEY; the referee sets them for bots it starts.
//
// Written from docs/protocol.md's quick start alone: one DEALER socket, hello, then a loop
// that reads one frame (one msgpack map) and dispatches on "type":
//   request -> action (a `legal` entry, unchanged, same request_id)   ping -> pong (same nonce)
//   welcome -> note whether multi_match was granted
//   match_end -> bye, exit 0 (multi_match granted: stay for the next match_start)
//   bye -> exit 0     reject -> exit 2     error -> print it
//   anything else -> ignored.
// Strategy (legal by construction): big gin > knock > draw from the stock > discard the
// highest card; pass the first upcard.
#define MSGPACK_NO_BOOST
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <msgpack.hpp>
#include <optional>
#include <string>
#include <zmq.hpp>

namespace {

const char* const BOT_NAME = "cpp-starter";

// The value of `key` in a msgpack map, or nullptr (absent, or not a map).
const msgpack::object* field(const msgpack::object& map, const std::string& key) {
    if (map.type != msgpack::type::MAP) return nullptr;
    for (uint32_t i = 0; i < map.via.map.size; ++i) {
        const msgpack::object_kv& kv = map.via.map.ptr[i];
        if (kv.key.type == msgpack::type::STR &&
            std::string(kv.key.via.str.ptr, kv.key.via.str.size) == key) {
            return &kv.val;
        }
    }
    return nullptr;
}

std::string text(const msgpack::object* value) {
    if (value == nullptr || value->type != msgpack::type::STR) return "";
    return std::string(value->via.str.ptr, value->via.str.size);
}

// Deadwood value of a card such as "Td": ace 1, 2-9 face value, ten and faces 10.
int value(const std::string& card) {
    if (card.empty()) return 0;
    const std::string ranks = "A23456789TJQK";
    const auto rank = ranks.find(card[0]);
    return rank == std::string::npos ? 0 : std::min<int>(static_cast<int>(rank) + 1, 10);
}

// The index of the `legal` entry to play. Change this: `request` is the whole request map
// (its "view" has your hand, the discard pile, ...).
uint32_t decide(const msgpack::object& request, const msgpack::object& legal) {
    (void)request;
    const auto count = legal.via.array.size;
    const auto kind = [&](uint32_t i) { return text(field(legal.via.array.ptr[i], "kind")); };
    for (const char* wanted : {"big_gin", "knock", "draw_stock", "pass_upcard"}) {
        for (uint32_t i = 0; i < count; ++i) {
            if (kind(i) == wanted) return i;
        }
    }
    uint32_t best = 0;
    int best_value = -1;
    for (uint32_t i = 0; i < count; ++i) {
        const int v = value(text(field(legal.via.array.ptr[i], "card")));
        if (kind(i) == "discard" && v > best_value) {
            best = i;
            best_value = v;
        }
    }
    return best;
}

// The 40-character Z85 value of `name` ("public-key" or "secret-key") in a ZeroMQ
// certificate file (`gin-referee keygen --bot NAME` writes NAME.key_secret), or "".
std::string cert_key(const std::string& path, const std::string& name) {
    std::ifstream file(path);
    std::string line;
    while (std::getline(file, line)) {
        const auto eq = line.find('=');
        const auto open = line.find('"'), close = line.rfind('"');
        if (eq == std::string::npos || open == std::string::npos || close <= open) continue;
        std::string key = line.substr(0, eq);
        key.erase(0, key.find_first_not_of(" \t"));
        key.erase(key.find_last_not_of(" \t") + 1);
        if (key == name) return line.substr(open + 1, close - open - 1);
    }
    return "";
}

// Make `sock` a CURVE client when GIN_REFEREE_SERVER_KEY is set (the referee requires CURVE
// over tcp://): this bot's pair from GIN_BOT_KEY_FILE, or GIN_BOT_PUBLIC_KEY and
// GIN_BOT_SECRET_KEY (the referee sets those two for the bots it starts). False if a key is
// missing or is not 40 characters of Z85.
bool set_curve(zmq::socket_t& sock) {
    const char* server = std::getenv("GIN_REFEREE_SERVER_KEY");
    if (server == nullptr) return true;  // ipc://, or a referee run with --insecure
    std::string public_key, secret_key;
    if (const char* file = std::getenv("GIN_BOT_KEY_FILE")) {
        public_key = cert_key(file, "public-key");
        secret_key = cert_key(file, "secret-key");
    } else if (std::getenv("GIN_BOT_PUBLIC_KEY") && std::getenv("GIN_BOT_SECRET_KEY")) {
        public_key = std::getenv("GIN_BOT_PUBLIC_KEY");
        secret_key = std::getenv("GIN_BOT_SECRET_KEY");
    }
    if (std::string(server).size() != 40 || public_key.size() != 40 || secret_key.size() != 40)
        return false;
    sock.set(zmq::sockopt::curve_serverkey, server);
    sock.set(zmq::sockopt::curve_publickey, public_key);
    sock.set(zmq::sockopt::curve_secretkey, secret_key);
    return true;
}

// Send one msgpack map as one frame; `fill` packs the map.
template <typename Fill>
void send(zmq::socket_t& sock, Fill fill) {
    msgpack::sbuffer buffer;
    msgpack::packer<msgpack::sbuffer> pk(buffer);
    fill(pk);
    sock.send(zmq::buffer(buffer.data(), buffer.size()), zmq::send_flags::none);
}

}  // namespace

int main() {
    const char* endpoint = std::getenv("GIN_REFEREE_ENDPOINT");
    const char* token = std::getenv("GIN_REFEREE_TOKEN");
    if (endpoint == nullptr || token == nullptr) {
        std::cerr << "GIN_REFEREE_ENDPOINT and GIN_REFEREE_TOKEN must be set\n";
        return 2;
    }
    zmq::context_t context;
    zmq::socket_t sock(context, zmq::socket_type::dealer);
    sock.set(zmq::sockopt::linger, 1000);           // flush the final bye
    sock.set(zmq::sockopt::rcvtimeo, 60000);        // give up after 60 s of silence
    sock.set(zmq::sockopt::maxmsgsize, int64_t{65536});
    sock.set(zmq::sockopt::heartbeat_ivl, 1000);    // keep the link warm
    sock.set(zmq::sockopt::heartbeat_timeout, 60000);  // a stalled referee keeps the link
    if (!set_curve(sock)) {
        std::cerr << BOT_NAME << ": GIN_REFEREE_SERVER_KEY is set: it and GIN_BOT_KEY_FILE (or "
                  << "GIN_BOT_PUBLIC_KEY and GIN_BOT_SECRET_KEY) must hold 40-character Z85 keys\n";
        return 2;
    }
    sock.connect(endpoint);

    send(sock, [&](auto& pk) {
        pk.pack_map(5);
        pk.pack("type"), pk.pack("hello");
        pk.pack("protocol_version"), pk.pack(1);
        pk.pack("name"), pk.pack(BOT_NAME);
        pk.pack("token"), pk.pack(token);
        pk.pack("multi_match"), pk.pack(true);  // decide() keeps no state between matches
    });
    bool multi_match = false;  // the welcome granted it: stay connected after match_end

    while (true) {
        zmq::message_t frame;
        if (!sock.recv(frame, zmq::recv_flags::none)) {
            std::cerr << "the referee has been silent for 60 s: giving up\n";
            return 4;
        }
        msgpack::object_handle handle;
        try {
            handle = msgpack::unpack(static_cast<const char*>(frame.data()), frame.size());
        } catch (const std::exception& err) {
            std::cerr << "undecodable message: " << err.what() << "\n";
            return 5;
        }
        const msgpack::object& msg = handle.get();
        const std::string type = text(field(msg, "type"));
        if (type == "welcome") {
            const msgpack::object* granted = field(msg, "multi_match");
            multi_match = granted != nullptr && granted->type == msgpack::type::BOOLEAN &&
                          granted->via.boolean;
        } else if (type == "request") {
            const msgpack::object* id = field(msg, "request_id");
            const msgpack::object* legal = field(msg, "legal");
            if (id == nullptr || legal == nullptr || legal->type != msgpack::type::ARRAY ||
                legal->via.array.size == 0) {
                std::cerr << "a request without request_id or legal actions\n";
                continue;
            }
            const msgpack::object& chosen = legal->via.array.ptr[decide(msg, *legal)];
            send(sock, [&](auto& pk) {
                pk.pack_map(3);
                pk.pack("type"), pk.pack("action");
                pk.pack("request_id"), pk.pack(*id);  // echoed as received: an integer
                pk.pack("action"), pk.pack(chosen);   // the legal entry, unchanged
            });
        } else if (type == "ping") {
            const msgpack::object* nonce = field(msg, "nonce");
            if (nonce == nullptr) continue;
            send(sock, [&](auto& pk) {
                pk.pack_map(2);
                pk.pack("type"), pk.pack("pong");
                pk.pack("nonce"), pk.pack(*nonce);
            });
        } else if (type == "match_end") {
            std::cerr << "match over: " << text(field(msg, "result")) << " ("
                      << text(field(msg, "reason")) << ")\n";
            if (multi_match) continue;  // wait (answering pings) for match_start or bye
            send(sock, [&](auto& pk) {
                pk.pack_map(2);
                pk.pack("type"), pk.pack("bye");
                pk.pack("reason"), pk.pack("match over");
            });
            return 0;
        } else if (type == "bye") {
            return 0;
        } else if (type == "reject") {
            std::cerr << "rejected: " << text(field(msg, "code")) << ": "
                      << text(field(msg, "message")) << "\n";
            return 2;
        } else if (type == "error") {
            std::cerr << "referee error: " << text(field(msg, "code")) << ": "
                      << text(field(msg, "message")) << "\n";
        }
        // match_start, hand_start, event, hand_end, game_end, unknown: ignored
    }
}
