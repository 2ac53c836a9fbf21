// Hidden tests of ring_buffer.cpp. Each TP_CHECK(n, condition) is one check, counted by the
// harness's check library (tp_check.hpp).
#include "../ring_buffer.cpp"

template <class F>
bool throws_out_of_range(F f) {
    try {
        f();
    } catch (const std::out_of_range&) {
        return true;
    }
    return false;
}

int main() {
    RingBuffer rb(4);
    rb.push(10);
    rb.push(20);
    rb.push(30);
    TP_CHECK(1, rb.pop() == 10);
    TP_CHECK(2, rb.at(0) == 20 && rb.at(1) == 30);
    TP_CHECK(3, rb.snapshot() == std::vector<int>{20, 30});
    rb.push(40);
    rb.push(50);
    TP_CHECK(4, rb.full() && rb.snapshot() == std::vector<int>{20, 30, 40, 50});
    rb.push(60);
    TP_CHECK(5, rb.snapshot() == std::vector<int>{30, 40, 50, 60} && rb.at(3) == 60);
    TP_CHECK(6, rb.pop() == 30 && rb.snapshot() == std::vector<int>{40, 50, 60});
    TP_CHECK(7, throws_out_of_range([&] { rb.at(3); }));
    RingBuffer one(1);
    one.push(7);
    one.push(8);
    TP_CHECK(8, one.size() == 1 && one.at(0) == 8);
    RingBuffer log(3);
    for (int v = 1; v <= 7; ++v) log.push(v);
    TP_CHECK(9, log.pop() == 5 && log.snapshot() == std::vector<int>{6, 7});
    log.push(8);
    TP_CHECK(10, log.snapshot() == std::vector<int>{6, 7, 8});
    return tp::finish();
}
