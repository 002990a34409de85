// Whether this test binary runs under a sanitizer, and how much longer a
// wall-clock bound may take there: ThreadSanitizer slows code 5-15x and
// AddressSanitizer about 2x, and CI runs them on 2 busy cores. Release runs
// keep the tight bounds.
#ifndef STRATA_TESTUTIL_SANITIZERS_H_
#define STRATA_TESTUTIL_SANITIZERS_H_

namespace strata::testutil {

#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
inline constexpr bool kUnderSanitizer = true;
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer) || __has_feature(address_sanitizer)
inline constexpr bool kUnderSanitizer = true;
#else
inline constexpr bool kUnderSanitizer = false;
#endif
#else
inline constexpr bool kUnderSanitizer = false;
#endif

// Factor on a test's wall-clock bounds.
inline constexpr double kWallClockScale = kUnderSanitizer ? 4.0 : 1.0;

}  // namespace strata::testutil

#endif  // STRATA_TESTUTIL_SANITIZERS_H_
