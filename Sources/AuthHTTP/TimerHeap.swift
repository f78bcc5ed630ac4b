/// Binary min-heap of connection deadlines. Entries are never removed early: a popped entry
/// is checked against the connection's current deadline (lazy deletion), so re-arming an idle
/// timer after every keep-alive response usually costs no heap operation at all.
struct TimerHeap {
    struct Entry {
        var deadline: UInt64
        var token: UInt64
    }

    private var entries: [Entry] = []

    var first: Entry? { entries.first }

    mutating func push(_ entry: Entry) {
        entries.append(entry)
        var child = entries.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            if entries[parent].deadline <= entries[child].deadline { break }
            entries.swapAt(parent, child)
            child = parent
        }
    }

    mutating func removeFirst() {
        let last = entries.removeLast()
        guard !entries.isEmpty else { return }
        entries[0] = last
        var parent = 0
        while true {
            let left = 2 * parent + 1
            if left >= entries.count { break }
            let right = left + 1
            let smaller = right < entries.count && entries[right].deadline < entries[left].deadline ? right : left
            if entries[parent].deadline <= entries[smaller].deadline { break }
            entries.swapAt(parent, smaller)
            parent = smaller
        }
    }
}
