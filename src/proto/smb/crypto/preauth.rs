//! The 3.1.1 preauthentication integrity hash (3.2.5.2, 3.2.5.3): SHA-512
//! chained over NEGOTIATE and SESSION_SETUP messages, so the keys a session
//! derives depend on every byte both sides said before authenticating.

use sha2::{Digest, Sha512};

#[derive(Clone, PartialEq, Eq)]
pub(crate) struct Preauth(pub(crate) [u8; 64]);

impl Default for Preauth {
    fn default() -> Self {
        Preauth([0; 64])
    }
}

impl Preauth {
    /// H = SHA-512(H || message), `message` being the whole SMB2 message
    /// without the 4-byte Direct TCP prefix.
    pub(crate) fn update(&mut self, message: &[u8]) {
        let mut h = Sha512::new();
        h.update(self.0);
        h.update(message);
        self.0.copy_from_slice(&h.finalize());
    }
}
