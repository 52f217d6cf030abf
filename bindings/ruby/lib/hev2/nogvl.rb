# frozen_string_literal: true

module Hev2
  # Loads the C extension Hev2::NoGVL (ext/hev2_wait, built when the gem is
  # installed; `make ruby-ext` in the source tree) if it is there:
  #
  #   Hev2::NoGVL.wait(wait_address, conn) -> hev2_wait status
  #   Hev2::NoGVL.connect(connect_wait_address, host, port_address,
  #                       options_address, out_address) -> fd, status or nil
  #
  # connect is hev2_connect_wait with a zero timeout, without the GVL (a
  # healthy connect in one call; see ext/hev2_wait/hev2_wait.c).
  #
  # runs hev2_wait without the GVL, in slices of SLICE_MS, with an unblocking
  # function that ends the wait after the slice in progress (returning
  # HEV2_EAGAIN once Ruby has run the interrupt), so Hev2.tcp can play the
  # race on the calling thread (HEV2_DRIVE_WAITER) and still be interrupted
  # within a few ms. Where it could not
  # be built (no C compiler), or with HEV2_NO_EXT=1 in the environment,
  # NoGVL.available? is false and Hev2.tcp waits as before: the race on a
  # library thread, and the caller waiting on the handle's eventfd.
  module NoGVL
    # Looked up on the load path first: a plain require of a file that is
    # not there makes RubyGems search every installed gem's files for it,
    # which costs more than the rest of `require "hev2"`.
    unless ENV["HEV2_NO_EXT"] == "1"
      found = begin
        $LOAD_PATH.resolve_feature_path("hev2/hev2_wait")
      rescue LoadError # Ruby < 3.1 raises where 3.1 returns nil
        nil
      end
      require found[1] if found
    end

    # true when the extension is loaded.
    def self.available?
      respond_to?(:wait)
    end
  end
end
