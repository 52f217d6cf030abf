# frozen_string_literal: true

# One line per benchmark row, with its goal and a verdict, the shape every
# language's benchmarks print (bench/c/row.h):
#
#   row: NAME   1.04x [1.01-1.08]  goal <= 1.10x  ok
#
# the median of the values given (per-round ratios, per-pair differences)
# and their spread. The line is also appended to the file $HEV2_BENCH_ROWS
# names, when set: `make bench` prints every row together at its end.
module Rows
  module_function

  # [median, min, max]
  def spread(values)
    s = values.sort
    mid = s.size / 2
    [s.size.odd? ? s[mid] : (s[mid - 1] + s[mid]) / 2.0, s.first, s.last]
  end

  # unit: "x" (ratios), "ms" (differences in ms) or "MB" (differences in
  # MB); goal nil: reported, not judged.
  def row(name, values, unit, goal: nil, detail: nil)
    med, lo, hi = spread(values)
    value, target = if unit == "x"
                      [format("%.2fx [%.2f-%.2f]", med, lo, hi), goal && format("goal <= %.2fx", goal)]
                    else
                      [format("%+.2f %s [%+.2f .. %+.2f]", med, unit, lo, hi), goal && format("goal <= %g %s", goal, unit)]
                    end
    verdict = goal.nil? ? "-" : (med <= goal ? "ok" : "ABOVE GOAL")
    line = format("row: %-74s %-28s %-16s %s", name, value, target || "goal: report", verdict)
    line += "  (#{detail})" if detail
    puts line
    $stdout.flush
    path = ENV.fetch("HEV2_BENCH_ROWS", "")
    File.write(path, "#{line}\n", mode: "a") unless path.empty?
  end
end
