// expect_error<E>(f, {...}): f throws E whose message names every given part (the op, the shapes,
// the values). Shared by the engine's error tests and the safety suite.
#pragma once
#include <gtest/gtest.h>

#include <exception>
#include <string>
#include <vector>

namespace maroon::test {

template <class E, class F>
void expect_error(F f, const std::vector<std::string>& must_contain) {
  try {
    f();
    ADD_FAILURE() << "no exception; expected one mentioning " << must_contain.at(0);
  } catch (const E& e) {
    std::string msg = e.what();
    for (const auto& s : must_contain)
      EXPECT_NE(msg.find(s), std::string::npos) << "message '" << msg << "' lacks '" << s << "'";
  } catch (const std::exception& e) {
    ADD_FAILURE() << "wrong exception type: " << e.what();
  }
}

}  // namespace maroon::test
