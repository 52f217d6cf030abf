# frozen_string_literal: true

# Timing and allocation helpers shared by the bench scripts.
module Measure
  module_function

  def now
    Process.clock_gettime(Process::CLOCK_MONOTONIC)
  end

  # Runs each labelled block `rounds` times `per_round` calls, interleaving
  # the labels so that machine noise hits both alike. Returns
  # { label => [median seconds per call, objects allocated per call] }.
  def compare(rounds:, per_round:, **blocks)
    times = Hash.new { |h, k| h[k] = [] }
    allocs = Hash.new(0)
    blocks.each_value { |b| 3.times { b.call } } # warm up
    rounds.times do
      blocks.each do |label, b|
        GC.start
        a = GC.stat(:total_allocated_objects)
        t = now
        per_round.times { b.call }
        times[label] << (now - t) / per_round
        allocs[label] += GC.stat(:total_allocated_objects) - a
      end
    end
    blocks.keys.to_h do |label|
      sorted = times[label].sort
      [label, [sorted[sorted.size / 2], allocs[label].fdiv(rounds * per_round)]]
    end
  end

  def report(title, results, base:, other:)
    b_t, b_a = results.fetch(base)
    o_t, o_a = results.fetch(other)
    puts title
    results.each do |label, (t, a)|
      printf("  %-34s %9.1f us/connection %7.1f objects/call\n", label, t * 1e6, a)
    end
    printf("  ratio %s / %s: time %.2fx, objects %.2fx\n", base, other, b_t / o_t, b_a / o_a)
  end
end
