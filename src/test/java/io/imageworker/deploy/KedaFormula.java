package io.imageworker.deploy;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The part of expr (the language of KEDA's {@code scalingModifiers.formula}) the chart's formula is written in, to
 * evaluate it on given trigger values: numbers, trigger names, {@code + - > >= < <= ==}, {@code ||}, {@code &&},
 * {@code a ? b : c}, parentheses, {@code max(...)} and {@code min(...)}. Anything else is refused, so that the chart
 * cannot drift into what this reading does not know.
 */
final class KedaFormula {

    private static final Pattern TOKEN =
            Pattern.compile("\\s*(\\d+(?:\\.\\d+)?|[A-Za-z_][A-Za-z0-9_]*|\\|\\||&&|>=|<=|==|[-+()?:,<>])");

    private final List<String> tokens = new ArrayList<>();
    private final Map<String, Double> values;
    private int at;

    private KedaFormula(String formula, Map<String, Double> values) {
        Matcher matcher = TOKEN.matcher(formula);
        int end = 0;
        while (matcher.lookingAt()) {
            tokens.add(matcher.group(1));
            end = matcher.end();
            matcher.region(end, formula.length());
        }
        if (!formula.substring(end).isBlank()) {
            throw new IllegalArgumentException("not understood from: " + formula.substring(end));
        }
        this.values = values;
    }

    /** The formula's value for the triggers' {@code values}, as KEDA's composite metric. */
    static double evaluate(String formula, Map<String, Double> values) {
        KedaFormula parser = new KedaFormula(formula, values);
        Object result = parser.ternary();
        if (parser.at != parser.tokens.size()) {
            throw new IllegalArgumentException("trailing " + parser.tokens.subList(parser.at, parser.tokens.size()));
        }
        return (Double) result;
    }

    private Object ternary() {
        Object condition = or();
        if (!peek("?")) {
            return condition;
        }
        at++;
        Object yes = ternary();
        expect(":");
        Object no = ternary();
        return (Boolean) condition ? yes : no;
    }

    private Object or() {
        Object left = and();
        while (peek("||")) {
            at++;
            Object right = and();
            left = (Boolean) left || (Boolean) right;
        }
        return left;
    }

    private Object and() {
        Object left = comparison();
        while (peek("&&")) {
            at++;
            Object right = comparison();
            left = (Boolean) left && (Boolean) right;
        }
        return left;
    }

    private Object comparison() {
        Object left = sum();
        for (String operator : List.of(">=", "<=", "==", ">", "<")) {
            if (peek(operator)) {
                at++;
                double a = (Double) left;
                double b = (Double) sum();
                return switch (operator) {
                    case ">=" -> a >= b;
                    case "<=" -> a <= b;
                    case "==" -> a == b;
                    case ">" -> a > b;
                    default -> a < b;
                };
            }
        }
        return left;
    }

    private Object sum() {
        Object left = term();
        while (peek("+") || peek("-")) {
            boolean plus = tokens.get(at++).equals("+");
            double right = (Double) term();
            left = plus ? (Double) left + right : (Double) left - right;
        }
        return left;
    }

    private Object term() {
        String token = tokens.get(at++);
        if (token.equals("(")) {
            Object inner = ternary();
            expect(")");
            return inner;
        }
        if (Character.isDigit(token.charAt(0))) {
            return Double.parseDouble(token);
        }
        if (token.equals("max") || token.equals("min")) {
            expect("(");
            List<Double> arguments = new ArrayList<>();
            arguments.add((Double) ternary());
            while (peek(",")) {
                at++;
                arguments.add((Double) ternary());
            }
            expect(")");
            return token.equals("max")
                    ? arguments.stream().mapToDouble(Double::doubleValue).max().orElseThrow()
                    : arguments.stream().mapToDouble(Double::doubleValue).min().orElseThrow();
        }
        Double value = values.get(token);
        if (value == null) {
            throw new IllegalArgumentException("no trigger named " + token);
        }
        return value;
    }

    private boolean peek(String token) {
        return at < tokens.size() && tokens.get(at).equals(token);
    }

    private void expect(String token) {
        if (!peek(token)) {
            throw new IllegalArgumentException("expected " + token + " at " + tokens.subList(at, tokens.size()));
        }
        at++;
    }
}
