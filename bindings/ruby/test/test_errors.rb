# frozen_string_literal: true

require "minitest/autorun"
require "hev2/errors"

# The exceptions Hev2.tcp builds from the library's outcome.
class TestErrors < Minitest::Test
  E = Hev2::Errors

  def test_connection_errors_are_errno_classes
    e = E.connection(Errno::ECONNREFUSED::Errno, "example.test", 443)
    assert_instance_of Errno::ECONNREFUSED, e
    assert_includes e.message, '"example.test" port 443'
    assert_instance_of Errno::ENETUNREACH, E.connection(Errno::ENETUNREACH::Errno, "h", 1)
  end

  def test_resolution_errors_keep_their_code
    e = E.resolution(Socket::EAI_NONAME, 0, "nope.test", 80)
    assert_kind_of SocketError, e
    assert_kind_of Socket::ResolutionError, e if defined?(Socket::ResolutionError)
    assert_equal Socket::EAI_NONAME, e.error_code
    assert_match(/Name or service not known/, e.message)
    assert_includes e.message, "nope.test"
  end

  def test_eai_system_becomes_the_errno_of_the_resolver_thread
    e = E.resolution(Socket::EAI_SYSTEM, Errno::EMFILE::Errno, "x.test", 80)
    assert_instance_of Errno::EMFILE, e
    assert_includes e.message, "x.test"
    # without an errno there is nothing better than the resolution error
    assert_kind_of SocketError, E.resolution(Socket::EAI_SYSTEM, 0, "x.test", 80)
  end

  def test_timeouts_as_the_running_ruby_raises_them
    assert_instance_of Errno::ETIMEDOUT, E.timeout(:connect_timeout, "h", 1)
    resolv = E.timeout(:resolv_timeout, "h", 1)
    if RUBY_VERSION >= "3.4" # Happy Eyeballs Socket.tcp
      assert_instance_of Errno::ETIMEDOUT, resolv
    else # the getaddrinfo timeout of Addrinfo.getaddrinfo(timeout:)
      assert_kind_of SocketError, resolv
      assert_equal Socket::EAI_AGAIN, resolv.error_code
    end
    tcp = E.timeout(:connect_timeout, "127.0.0.1", 1, TCPSocket, Hev2::Request.new(fast_fallback: true))
    assert_instance_of(defined?(IO::TimeoutError) ? IO::TimeoutError : Errno::ETIMEDOUT, tcp)
    open = E.timeout(:open_timeout, "h", 1)
    assert_instance_of(defined?(IO::TimeoutError) ? IO::TimeoutError : Errno::ETIMEDOUT, open)
    assert_match(/user specified timeout/, open.message)
  end

  def test_describe_error_follows_the_client_contract
    e = E.resolution(Socket::EAI_AGAIN, 0, "x.test", 80)
    d = Hev2.describe_error(e)
    assert_equal({ "errno" => "", "eai" => "EAI_AGAIN", "timeout" => "" }, d.reject { |k, _| k == "message" })
    e = E.timeout(:connect_timeout, "h", 1).extend(Hev2::Failure)
    e.hev2_timeout = :connect_timeout
    assert_equal "ETIMEDOUT", Hev2.describe_error(e)["errno"]
    assert_equal "connect_timeout", Hev2.describe_error(e)["timeout"]
  end
end
