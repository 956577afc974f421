// The on-disk build-route list (native/src/trt/build_routes_cache.h): a hit only for the very
// library file (path, size, modification time) and GPU it was read for; written atomically
// under TBS_STATE_DIR. No TensorRT needed.
#include <stdlib.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <time.h>

#include <fstream>

#include "check.h"
#include "temp_dir.h"
#include "trt/build_routes_cache.h"

using namespace tbs::trt;

TEST(routes_are_kept_for_the_same_library_and_gpu_only) {
  tbs_test::TempDir dir("tbs-routes");
  setenv("TBS_STATE_DIR", dir.file("state").c_str(), 1);
  std::string lib = dir.file("libnvinfer.so.11");
  std::ofstream(lib) << "library bytes";
  RoutesCacheKey key;
  std::string error, json;
  CHECK_MSG(routesCacheKey(lib, "NVIDIA H200", key, error), error);
  CHECK(!readCachedRoutes(key, json));
  std::string const routes = R"({"knobs":[{"name":"conv_use_long_w","allowed_values":"-conv_use_long_w=[on|off]"}]})";
  CHECK_MSG(writeCachedRoutes(key, routes, error), error);
  CHECK_CONTAINS(routesCacheFile(key), dir.file("state") + "/build-routes/");
  CHECK(readCachedRoutes(key, json));
  CHECK_EQ(json, routes);

  // Another GPU: a miss.
  RoutesCacheKey other;
  CHECK(routesCacheKey(lib, "NVIDIA L4", other, error));
  CHECK(!readCachedRoutes(other, json));
  // The library replaced (size and time change): a miss.
  std::ofstream(lib) << "a newer library, longer";
  struct timespec times[2] = {{0, UTIME_OMIT}, {1, 0}};
  CHECK_EQ(::utimensat(AT_FDCWD, lib.c_str(), times, 0), 0);
  RoutesCacheKey changed;
  CHECK(routesCacheKey(lib, "NVIDIA H200", changed, error));
  CHECK(!readCachedRoutes(changed, json));
  unsetenv("TBS_STATE_DIR");
}

// Some TensorRT builds list no routes at all (getAllBuildRoutes() returns ""): that answer is
// kept too, so asking again does not create another builder.
TEST(an_empty_route_list_is_remembered_as_an_answer) {
  tbs_test::TempDir dir("tbs-routes-empty");
  setenv("TBS_STATE_DIR", dir.file("state").c_str(), 1);
  std::string lib = dir.file("libnvinfer.so.11");
  std::ofstream(lib) << "library bytes";
  RoutesCacheKey key;
  std::string error, json = "stale";
  CHECK_MSG(routesCacheKey(lib, "NVIDIA H200", key, error), error);
  CHECK(!readCachedRoutes(key, json));
  CHECK_MSG(writeCachedRoutes(key, "", error), error);
  CHECK(readCachedRoutes(key, json));
  CHECK_EQ(json, std::string());
  unsetenv("TBS_STATE_DIR");
}

TEST(a_missing_library_is_named) {
  RoutesCacheKey key;
  std::string error;
  CHECK(!routesCacheKey("/nonexistent/libnvinfer.so.11", "", key, error));
  CHECK_CONTAINS(error, "/nonexistent/libnvinfer.so.11");
}

TEST_MAIN()
