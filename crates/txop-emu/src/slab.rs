//! The bytes of the packets inside the emulated network, in a bounded slab.
//!
//! A packet's slot index is the `token` the model carries, so a delivery finds its
//! bytes again. Buffers are allocated the first time a slot is used and reused after,
//! so the steady state allocates nothing per packet. The slab is bounded: when every
//! slot is taken the next packet is refused (and counted as a drop), so memory stays
//! flat whatever the offered load.

/// Room for one packet: the TUN MTU plus slack, so that an oversized read shows up
/// as a length mismatch rather than silently fitting.
pub const BUF_BYTES: usize = 2048;

/// One packet's bytes and the emulator's metadata `M` about it.
pub struct Slot<M> {
    buf: Box<[u8; BUF_BYTES]>,
    len: u16,
    pub meta: M,
}

impl<M> Slot<M> {
    pub fn bytes(&self) -> &[u8] {
        &self.buf[..self.len as usize]
    }
    pub fn bytes_mut(&mut self) -> &mut [u8] {
        &mut self.buf[..self.len as usize]
    }
}

/// At most `capacity` packets.
pub struct PacketSlab<M> {
    slots: Vec<Option<Slot<M>>>,
    /// Buffers of freed slots, ready for reuse. Boxed: a buffer moves between the
    /// slab and the reader as a pointer, never as 2 KB copied.
    #[allow(clippy::vec_box)]
    spare: Vec<Box<[u8; BUF_BYTES]>>,
    free: Vec<u32>,
    capacity: usize,
    used: usize,
}

impl<M> PacketSlab<M> {
    pub fn new(capacity: usize) -> PacketSlab<M> {
        PacketSlab {
            slots: Vec::new(),
            spare: Vec::new(),
            free: Vec::new(),
            capacity: capacity.clamp(1, u32::MAX as usize),
            used: 0,
        }
    }

    /// Packets held.
    pub fn len(&self) -> usize {
        self.used
    }

    pub fn is_empty(&self) -> bool {
        self.used == 0
    }

    pub fn is_full(&self) -> bool {
        self.used >= self.capacity
    }

    /// A buffer to read the next packet into (reused if possible): pass it back with
    /// [`PacketSlab::insert`] or [`PacketSlab::recycle`].
    pub fn buffer(&mut self) -> Box<[u8; BUF_BYTES]> {
        self.spare
            .pop()
            .unwrap_or_else(|| Box::new([0u8; BUF_BYTES]))
    }

    /// Return a buffer that was not used.
    pub fn recycle(&mut self, buf: Box<[u8; BUF_BYTES]>) {
        self.spare.push(buf);
    }

    /// Store a packet of `len` bytes (in `buf`): its token, or `None` (and the buffer
    /// kept for reuse) if the slab is full.
    pub fn insert(&mut self, buf: Box<[u8; BUF_BYTES]>, len: usize, meta: M) -> Option<u64> {
        if self.is_full() {
            self.spare.push(buf);
            return None;
        }
        let slot = Slot {
            buf,
            len: len.min(BUF_BYTES) as u16,
            meta,
        };
        self.used += 1;
        match self.free.pop() {
            Some(i) => {
                self.slots[i as usize] = Some(slot);
                Some(i as u64)
            }
            None => {
                self.slots.push(Some(slot));
                Some((self.slots.len() - 1) as u64)
            }
        }
    }

    pub fn get(&self, token: u64) -> Option<&Slot<M>> {
        self.slots.get(token as usize)?.as_ref()
    }

    pub fn get_mut(&mut self, token: u64) -> Option<&mut Slot<M>> {
        self.slots.get_mut(token as usize)?.as_mut()
    }

    /// Free a packet's slot (its buffer is kept for reuse); its metadata.
    pub fn remove(&mut self, token: u64) -> Option<M> {
        let slot = self.slots.get_mut(token as usize)?.take()?;
        self.used -= 1;
        self.free.push(token as u32);
        self.spare.push(slot.buf);
        Some(slot.meta)
    }

    /// Free a packet's slot and hand its buffer over (a packet leaving for another
    /// BSS's slab, [`crate::engine`]): the buffer, its length and the metadata.
    pub fn take(&mut self, token: u64) -> Option<(Box<[u8; BUF_BYTES]>, usize, M)> {
        let slot = self.slots.get_mut(token as usize)?.take()?;
        self.used -= 1;
        self.free.push(token as u32);
        Some((slot.buf, usize::from(slot.len), slot.meta))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounded_and_reuses_slots_and_buffers() {
        let mut s: PacketSlab<u32> = PacketSlab::new(2);
        let mut b = s.buffer();
        b[..3].copy_from_slice(b"abc");
        let t0 = s.insert(b, 3, 10).unwrap();
        let b = s.buffer();
        let t1 = s.insert(b, 1, 11).unwrap();
        assert!(s.is_full());
        let b = s.buffer();
        assert_eq!(s.insert(b, 1, 12), None, "refused when full");
        assert_eq!(s.get(t0).unwrap().bytes(), b"abc");
        assert_eq!(s.remove(t0), Some(10));
        assert_eq!(s.remove(t0), None, "a token is freed once");
        let b = s.buffer();
        let t2 = s.insert(b, 2, 13).unwrap();
        assert_eq!(t2, t0, "the freed slot is reused");
        assert_eq!(s.len(), 2);
        assert_eq!(s.get(t1).unwrap().meta, 11);
        // Two buffers were ever in use plus the refused one: nothing more allocated.
        assert!(s.slots.len() == 2 && s.spare.len() == 1);
    }
}
