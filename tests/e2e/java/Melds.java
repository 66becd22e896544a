import ginrummy.Card;
import java.util.ArrayList;
import java.util.List;

/** Melds and deadwood for the test player (a small exhaustive search). */
final class Melds {
    private Melds() {}

    static int value(Card c) {
        return Math.min(c.getRank() + 1, 10);
    }

    static boolean isMeld(List<Card> cards) {
        int n = cards.size();
        if (n < 3) {
            return false;
        }
        boolean sameRank = true, sameSuit = true;
        int min = 99, max = -1;
        for (Card c : cards) {
            sameRank &= c.getRank() == cards.get(0).getRank();
            sameSuit &= c.getSuit() == cards.get(0).getSuit();
            min = Math.min(min, c.getRank());
            max = Math.max(max, c.getRank());
        }
        return (sameRank && n <= 4) || (sameSuit && max - min == n - 1);
    }

    static List<List<Card>> all(List<Card> hand) {
        List<List<Card>> out = new ArrayList<>();
        int n = hand.size();
        for (int mask = 0; mask < (1 << n); mask++) {
            if (Integer.bitCount(mask) < 3) {
                continue;
            }
            List<Card> m = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                if ((mask & (1 << i)) != 0) {
                    m.add(hand.get(i));
                }
            }
            if (isMeld(m)) {
                out.add(m);
            }
        }
        return out;
    }

    private static int search(List<List<Card>> melds, int from, List<Card> left, List<List<Card>> chosen,
            List<List<Card>> best, int[] bestValue) {
        int here = 0;
        for (Card c : left) {
            here += value(c);
        }
        if (here < bestValue[0]) {
            bestValue[0] = here;
            best.clear();
            best.addAll(chosen);
        }
        for (int i = from; i < melds.size(); i++) {
            List<Card> m = melds.get(i);
            if (left.containsAll(m)) {
                List<Card> rest = new ArrayList<>(left);
                rest.removeAll(m);
                chosen.add(m);
                search(melds, i + 1, rest, chosen, best, bestValue);
                chosen.remove(chosen.size() - 1);
            }
        }
        return bestValue[0];
    }

    static ArrayList<ArrayList<Card>> best(List<Card> hand) {
        List<List<Card>> best = new ArrayList<>();
        int[] value = {Integer.MAX_VALUE};
        search(all(hand), 0, new ArrayList<>(hand), new ArrayList<>(), best, value);
        ArrayList<ArrayList<Card>> out = new ArrayList<>();
        for (List<Card> m : best) {
            out.add(new ArrayList<>(m));
        }
        return out;
    }

    /** The least deadwood of {@code hand}. */
    static int deadwood(List<Card> hand) {
        int[] value = {Integer.MAX_VALUE};
        search(all(hand), 0, new ArrayList<>(hand), new ArrayList<>(), new ArrayList<>(), value);
        return value[0];
    }

    static boolean inMeld(List<Card> hand, Card card) {
        for (List<Card> m : all(hand)) {
            if (m.contains(card)) {
                return true;
            }
        }
        return false;
    }
}
