"""What a card is, where it is stored, how it is signed, what it may show, and which process
holds it while it runs; nothing here decides a card."""
