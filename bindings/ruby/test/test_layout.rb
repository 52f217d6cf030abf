# frozen_string_literal: true

require "minitest/autorun"
require "rbconfig"
require "tmpdir"
require "hev2/layout"
require "hev2/scratch"

# The struct offsets the gem uses are checked against the C compiler's
# reading of include/hev2.h, so the two cannot drift apart.
class TestLayout < Minitest::Test
  HEADER_DIR = File.expand_path("../../../include", __dir__)
  STRUCTS = {
    "hev2_options" => [Hev2::Layout::OPTIONS, Hev2::Layout::OPTIONS_SIZE],
    "hev2_result_info" => [Hev2::Layout::RESULT, Hev2::Layout::RESULT_SIZE],
    "hev2_lookup_info" => [Hev2::Layout::LOOKUP, Hev2::Layout::LOOKUP_SIZE],
    "hev2_attempt_info" => [Hev2::Layout::ATTEMPT, Hev2::Layout::ATTEMPT_SIZE],
    "hev2_event_info" => [Hev2::Layout::EVENT, Hev2::Layout::EVENT_SIZE],
    "hev2_stats_info" => [Hev2::Layout::STATS, Hev2::Layout::STATS_SIZE],
    "hev2_report_info" => [Hev2::Layout::REPORT, Hev2::Layout::REPORT_SIZE],
    "hev2_report_phase" => [Hev2::Layout::REPORT_PHASE, Hev2::ABI::SIZES.fetch(:hev2_report_phase)],
    "hev2_report_lookup_info" => [Hev2::Layout::REPORT_LOOKUP, Hev2::Layout::REPORT_LOOKUP_SIZE],
    "hev2_report_attempt_info" => [Hev2::Layout::REPORT_ATTEMPT, Hev2::Layout::REPORT_ATTEMPT_SIZE],
    "hev2_service_info" => [Hev2::Layout::SERVICE, Hev2::Layout::SERVICE_SIZE],
  }.freeze

  def compiler_view
    lines = STRUCTS.flat_map do |type, (fields, _)|
      [%(printf("#{type} sizeof %zu\\n", sizeof(#{type}));)] +
        fields.keys.map { |f| %(printf("#{type} #{f} %zu\\n", offsetof(#{type}, #{f}));) }
    end
    Dir.mktmpdir do |dir|
      src = File.join(dir, "layout.c")
      File.write(src, <<~C)
        #include <stddef.h>
        #include <stdio.h>
        #include "hev2.h"
        int main(void) {
        #{lines.join("\n")}
        return 0;
        }
      C
      exe = File.join(dir, "layout")
      cc = ENV.fetch("CC", "cc")
      assert system(cc, "-Wall", "-Wextra", "-Werror", "-I#{HEADER_DIR}", src, "-o", exe),
             "#{cc} could not compile the layout probe against #{HEADER_DIR}/hev2.h"
      IO.popen([exe], &:read).lines.to_h do |line|
        type, field, value = line.split
        [[type, field], Integer(value)]
      end
    end
  end

  def test_every_offset_and_size_matches_the_header
    seen = compiler_view
    STRUCTS.each do |type, (fields, size)|
      assert_equal seen.fetch([type, "sizeof"]), size, "sizeof(#{type})"
      fields.each do |field, offset|
        assert_equal seen.fetch([type, field.to_s]), offset, "offsetof(#{type}, #{field})"
      end
    end
  end

  # Each struct's region of a Scratch buffer ends before the next begins.
  def test_scratch_regions_do_not_overlap
    l = Hev2::Layout
    sc = Hev2::Scratch
    regions = [
      [sc::RESULT, l::RESULT_SIZE], [sc::OPTIONS, l::OPTIONS_SIZE], [sc::ATTEMPT, l::ATTEMPT_SIZE],
      [sc::EVENT, l::EVENT_SIZE], [sc::STATS, l::STATS_SIZE], [sc::REPORT, l::REPORT_SIZE],
      [sc::REPORT_LOOKUP, l::REPORT_LOOKUP_SIZE], [sc::REPORT_ATTEMPT, l::REPORT_ATTEMPT_SIZE],
      [sc::SERVICE, l::SERVICE_SIZE], [sc::ECH, sc::ECH_SIZE],
    ].sort
    regions.each_cons(2) { |(at, size), (nxt, _)| assert_operator at + size, :<=, nxt, "region at #{at}" }
    assert_operator regions.last.sum, :<=, sc::BYTES
  end
end
