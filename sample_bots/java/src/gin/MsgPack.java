package gin;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The part of msgpack the protocol uses, both ways: maps with string keys, arrays, strings,
 * integers, booleans and nil (docs/protocol.md, "Encoding"). Decoded values are
 * {@code Map<String, Object>}, {@code List<Object>}, {@code String}, {@code Long},
 * {@code Boolean} or null; floats, bin and ext are refused, as the referee refuses them.
 * Encoding takes the same types ({@code Integer} too).
 */
public final class MsgPack {
    /** The protocol's decoding limits (docs/protocol.md, "Limits"). */
    public static final int MAX_DEPTH = 16, MAX_ARRAY = 1024, MAX_MAP = 256, MAX_STR = 4096;

    /** Bytes that are no message of the protocol. */
    public static final class FormatError extends RuntimeException {
        private static final long serialVersionUID = 1L;

        FormatError(String message) {
            super(message);
        }
    }

    private MsgPack() {}

    // ------------------------------------------------------------------ encoding

    /** The msgpack bytes of {@code value}. */
    public static byte[] encode(Object value) {
        ByteArrayOutputStream out = new ByteArrayOutputStream(128);
        write(out, value);
        return out.toByteArray();
    }

    private static void write(ByteArrayOutputStream out, Object value) {
        if (value == null) {
            out.write(0xc0);
        } else if (value instanceof Boolean b) {
            out.write(b ? 0xc3 : 0xc2);
        } else if (value instanceof Integer || value instanceof Long) {
            writeInt(out, ((Number) value).longValue());
        } else if (value instanceof String s) {
            byte[] bytes = s.getBytes(StandardCharsets.UTF_8);
            int n = bytes.length;
            if (n < 32) {
                out.write(0xa0 | n);
            } else if (n < 256) {
                out.write(0xd9);
                out.write(n);
            } else if (n < 65536) {
                out.write(0xda);
                be(out, n, 2);
            } else {
                out.write(0xdb);
                be(out, n, 4);
            }
            out.write(bytes, 0, n);
        } else if (value instanceof Map<?, ?> map) {
            header(out, map.size(), 0x80, 0xde);
            for (Map.Entry<?, ?> e : map.entrySet()) {
                write(out, (String) e.getKey());
                write(out, e.getValue());
            }
        } else if (value instanceof List<?> list) {
            header(out, list.size(), 0x90, 0xdc);
            for (Object item : list) {
                write(out, item);
            }
        } else {
            throw new IllegalArgumentException("cannot encode " + value.getClass().getName());
        }
    }

    private static void header(ByteArrayOutputStream out, int n, int fix, int wide) {
        if (n < 16) {
            out.write(fix | n);
        } else if (n < 65536) {
            out.write(wide);
            be(out, n, 2);
        } else {
            out.write(wide + 1);
            be(out, n, 4);
        }
    }

    private static void writeInt(ByteArrayOutputStream out, long v) {
        if (v >= 0 && v < 128) {
            out.write((int) v);
        } else if (v < 0 && v >= -32) {
            out.write((int) (v & 0xff));
        } else if (v >= 0) {
            if (v < 256) {
                out.write(0xcc);
                be(out, v, 1);
            } else if (v < 65536) {
                out.write(0xcd);
                be(out, v, 2);
            } else if (v < 4294967296L) {
                out.write(0xce);
                be(out, v, 4);
            } else {
                out.write(0xcf);
                be(out, v, 8);
            }
        } else if (v >= Integer.MIN_VALUE) {
            out.write(0xd2);
            be(out, v, 4);
        } else {
            out.write(0xd3);
            be(out, v, 8);
        }
    }

    private static void be(ByteArrayOutputStream out, long v, int bytes) {
        for (int i = bytes - 1; i >= 0; i--) {
            out.write((int) (v >>> (8 * i)) & 0xff);
        }
    }

    // ------------------------------------------------------------------ decoding

    /** The one value {@code bytes} hold; throws {@link FormatError} otherwise. */
    public static Object decode(byte[] bytes) {
        int[] pos = {0};
        Object value = read(bytes, pos, 1);
        if (pos[0] != bytes.length) {
            throw new FormatError("extra bytes after the value");
        }
        return value;
    }

    private static Object read(byte[] b, int[] pos, int depth) {
        int tag = u8(b, pos);
        if (tag <= 0x7f) {
            return (long) tag;
        }
        if (tag >= 0xe0) {
            return (long) (byte) tag;
        }
        if ((tag & 0xf0) == 0x80) {
            return map(b, pos, tag & 0x0f, depth);
        }
        if ((tag & 0xf0) == 0x90) {
            return array(b, pos, tag & 0x0f, depth);
        }
        if ((tag & 0xe0) == 0xa0) {
            return str(b, pos, tag & 0x1f);
        }
        switch (tag) {
            case 0xc0:
                return null;
            case 0xc2:
                return Boolean.FALSE;
            case 0xc3:
                return Boolean.TRUE;
            case 0xcc:
                return uint(b, pos, 1);
            case 0xcd:
                return uint(b, pos, 2);
            case 0xce:
                return uint(b, pos, 4);
            case 0xcf: {
                long v = uint(b, pos, 8);
                if (v < 0) {
                    throw new FormatError("integer beyond 2^63");
                }
                return v;
            }
            case 0xd0:
                return (long) (byte) uint(b, pos, 1);
            case 0xd1:
                return (long) (short) uint(b, pos, 2);
            case 0xd2:
                return (long) (int) uint(b, pos, 4);
            case 0xd3:
                return uint(b, pos, 8);
            case 0xd9:
                return str(b, pos, (int) uint(b, pos, 1));
            case 0xda:
                return str(b, pos, (int) uint(b, pos, 2));
            case 0xdb:
                return str(b, pos, size(uint(b, pos, 4)));
            case 0xdc:
                return array(b, pos, (int) uint(b, pos, 2), depth);
            case 0xdd:
                return array(b, pos, size(uint(b, pos, 4)), depth);
            case 0xde:
                return map(b, pos, (int) uint(b, pos, 2), depth);
            case 0xdf:
                return map(b, pos, size(uint(b, pos, 4)), depth);
            default:
                throw new FormatError(String.format("msgpack type 0x%02x is not used by the protocol", tag));
        }
    }

    private static int size(long n) {
        if (n > Integer.MAX_VALUE) {
            throw new FormatError("length beyond the limits");
        }
        return (int) n;
    }

    private static Map<String, Object> map(byte[] b, int[] pos, int n, int depth) {
        if (depth > MAX_DEPTH || n > MAX_MAP) {
            throw new FormatError("map beyond the limits");
        }
        Map<String, Object> map = new LinkedHashMap<>();
        for (int i = 0; i < n; i++) {
            Object key = read(b, pos, depth + 1);
            if (!(key instanceof String)) {
                throw new FormatError("a map key that is not a string");
            }
            map.put((String) key, read(b, pos, depth + 1));
        }
        return map;
    }

    private static List<Object> array(byte[] b, int[] pos, int n, int depth) {
        if (depth > MAX_DEPTH || n > MAX_ARRAY) {
            throw new FormatError("array beyond the limits");
        }
        List<Object> list = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            list.add(read(b, pos, depth + 1));
        }
        return list;
    }

    private static String str(byte[] b, int[] pos, int n) {
        if (n > MAX_STR || pos[0] + n > b.length) {
            throw new FormatError("string beyond the limits or the message");
        }
        String s = new String(b, pos[0], n, StandardCharsets.UTF_8);
        pos[0] += n;
        return s;
    }

    private static long uint(byte[] b, int[] pos, int n) {
        if (pos[0] + n > b.length) {
            throw new FormatError("message cut short");
        }
        long v = 0;
        for (int i = 0; i < n; i++) {
            v = (v << 8) | (b[pos[0]++] & 0xff);
        }
        return v;
    }

    private static int u8(byte[] b, int[] pos) {
        if (pos[0] >= b.length) {
            throw new FormatError("message cut short");
        }
        return b[pos[0]++] & 0xff;
    }
}
