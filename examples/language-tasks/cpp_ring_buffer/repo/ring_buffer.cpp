// A fixed-capacity ring buffer of ints for the sensor log: once the buffer is full, each new
// value overwrites the oldest one.
#include <cstddef>
#include <stdexcept>
#include <vector>

class RingBuffer {
public:
    explicit RingBuffer(std::size_t capacity);
    std::size_t size() const { return count_; }
    bool full() const { return count_ == data_.size(); }
    void push(int value);
    int pop();
    int at(std::size_t i) const;
    std::vector<int> snapshot() const;

private:
    std::vector<int> data_;
    std::size_t head_ = 0;  // slot of the oldest value
    std::size_t count_ = 0;
};

RingBuffer::RingBuffer(std::size_t capacity) : data_(capacity) {
    if (capacity == 0) throw std::invalid_argument("a ring buffer needs room for one value");
}

// Appends a value; a full buffer drops its oldest one.
void RingBuffer::push(int value) {
    if (full()) {
        data_[head_] = value;
        head_ = (head_ + 1) % data_.size();
        return;
    }
    data_[(head_ + count_) % data_.size()] = value;
    ++count_;
}

// Removes and returns the oldest value.
int RingBuffer::pop() {
    if (count_ == 0) throw std::out_of_range("pop from an empty ring buffer");
    int value = data_[head_];
    head_ = (head_ + 1) % data_.size();
    --count_;
    return value;
}

// The i-th oldest value: at(0) is the oldest, at(size() - 1) the newest.
int RingBuffer::at(std::size_t i) const {
    if (i >= count_) throw std::out_of_range("ring buffer index out of range");
    return data_[(head_ + i) % count_];
}

// Every value, oldest first.
std::vector<int> RingBuffer::snapshot() const {
    std::vector<int> out;
    for (std::size_t i = 0; i < count_; ++i) out.push_back(at(i));
    return out;
}
