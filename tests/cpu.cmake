# Graph builder, memory planner, thread pool and CPU kernels.
tern_add_test(NAME test_threadpool SOURCES test_threadpool.cpp)
tern_add_test(NAME test_graph SOURCES test_graph.cpp)
tern_add_test(NAME test_planner SOURCES test_planner.cpp)
tern_add_test(NAME test_ops SOURCES test_ops.cpp)
tern_add_test(NAME test_mul_mat SOURCES test_mul_mat.cpp)
