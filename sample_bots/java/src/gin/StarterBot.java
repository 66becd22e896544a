package gin;

import java.util.List;
import java.util.Map;

/**
 * A starter bot in Java: copy this file and change {@link #choose}. Its strategy is the Node
 * and C starter bots': big gin, else knock, else shed the card that fits the hand worst; take
 * the discard only when it fits the hand (a card of its rank, or two run neighbours), else
 * draw from the stock.
 *
 * <p>Build: {@code make -C sample_bots/java} (one {@code javac} run); play:
 * {@code gin-referee match "java -cp sample_bots/java/build gin.StarterBot" "python3 -m
 * sample_bots.random_bot"}.
 */
public final class StarterBot extends GinBot {
    private static final String RANKS = "A23456789TJQK";

    @Override
    protected Map<String, Object> act(Map<String, Object> request) {
        List<Object> legal = list(request, "legal");
        return map(legal.get(choose(legal, map(request.get("view")))));
    }

    /** The index of the legal action to play. */
    static int choose(List<Object> legal, Map<String, Object> view) {
        List<String> hand = cards(view.get("hand"));
        for (int i = 0; i < legal.size(); i++) {
            if ("big_gin".equals(str(map(legal.get(i)), "kind"))) {
                return i;
            }
        }
        for (String kind : new String[] {"knock", "discard"}) {
            int best = -1;
            int bestCost = Integer.MAX_VALUE;
            for (int i = 0; i < legal.size(); i++) {
                Map<String, Object> action = map(legal.get(i));
                if (kind.equals(str(action, "kind"))) {
                    String card = str(action, "card");
                    int cost = fit(card, hand) * 100 - points(card);
                    if (cost < bestCost) {
                        best = i;
                        bestCost = cost;
                    }
                }
            }
            if (best >= 0) {
                return best;
            }
        }
        List<String> pile = cards(view.get("discard_pile"));
        String top = pile.isEmpty() ? null : pile.get(pile.size() - 1);
        int take = indexOf(legal, "take_discard");
        if (take >= 0 && top != null && fit(top, hand) >= 2) {
            return take;
        }
        for (String kind : new String[] {"draw_stock", "pass_upcard"}) {
            int i = indexOf(legal, kind);
            if (i >= 0) {
                return i;
            }
        }
        return 0;
    }

    private static int indexOf(List<Object> legal, String kind) {
        for (int i = 0; i < legal.size(); i++) {
            if (kind.equals(str(map(legal.get(i)), "kind"))) {
                return i;
            }
        }
        return -1;
    }

    static int rank(String card) {
        return RANKS.indexOf(card.charAt(0));
    }

    static int points(String card) {
        return Math.min(rank(card) + 1, 10);
    }

    /** How well {@code card} fits {@code hand}: 2 per card of its rank, 1 per run neighbour
     * (same suit, at most two ranks away). */
    static int fit(String card, List<String> hand) {
        int score = 0;
        for (String other : hand) {
            if (other.equals(card)) {
                continue;
            }
            if (rank(other) == rank(card)) {
                score += 2;
            } else if (other.charAt(1) == card.charAt(1) && Math.abs(rank(other) - rank(card)) <= 2) {
                score += 1;
            }
        }
        return score;
    }

    public static void main(String[] args) {
        System.exit(new StarterBot().run("java-starter"));
    }
}
