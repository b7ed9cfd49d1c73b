/* SPDX-License-Identifier: Apache-2.0 */
// Assertions on libcattn statuses that print the thread's last error message on failure.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "cattn.h"

#define EXPECT_CATTN_OK(expr)                                                    \
  do {                                                                           \
    const cattn_status_t s_ = (expr);                                            \
    EXPECT_EQ(s_, CATTN_OK) << cattn_status_string(s_) << ": "                   \
                            << cattn_last_error_message();                       \
  } while (0)
#define ASSERT_CATTN_OK(expr)                                                    \
  do {                                                                           \
    const cattn_status_t s_ = (expr);                                            \
    ASSERT_EQ(s_, CATTN_OK) << cattn_status_string(s_) << ": "                   \
                            << cattn_last_error_message();                       \
  } while (0)
// Expects `code` and a last-error message that mentions `needle` (the argument's name).
#define EXPECT_CATTN_ERROR(expr, code, needle)                                   \
  do {                                                                           \
    const cattn_status_t s_ = (expr);                                            \
    EXPECT_EQ(s_, code) << cattn_status_string(s_) << ": " << cattn_last_error_message(); \
    EXPECT_NE(std::string(cattn_last_error_message()).find(needle), std::string::npos) \
        << "message: " << cattn_last_error_message();                           \
  } while (0)
