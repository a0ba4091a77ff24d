// SPDX-License-Identifier: Apache-2.0
// The out-of-line parts of Boost.Asio, its OpenSSL layer and Boost.Beast,
// compiled once here (BOOST_ASIO_SEPARATE_COMPILATION and
// BOOST_BEAST_SEPARATE_COMPILATION in daemon/web/CMakeLists.txt) rather than
// in every file of daemon/web that includes their headers.
#include <boost/asio/impl/src.hpp>
#include <boost/asio/ssl/impl/src.hpp>
#include <boost/beast/src.hpp>
