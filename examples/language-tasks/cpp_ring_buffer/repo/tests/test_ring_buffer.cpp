// Public tests of ring_buffer.cpp. Each TP_CHECK(n, condition) is one check, counted by the
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
    TP_CHECK(1, rb.size() == 3 && !rb.full());
    TP_CHECK(2, rb.at(0) == 10 && rb.at(2) == 30);
    TP_CHECK(3, rb.snapshot() == std::vector<int>{10, 20, 30});
    TP_CHECK(4, throws_out_of_range([&] { rb.at(3); }));
    RingBuffer pair(2);
    pair.push(5);
    pair.push(6);
    TP_CHECK(5, pair.full() && pair.pop() == 5 && pair.pop() == 6 && pair.size() == 0);
    return tp::finish();
}
