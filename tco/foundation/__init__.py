"""What every layer may read: errors, fields and their units, limits, numbers and labels as people read
them, plain values, files and CSV written safely. Nothing here models anything or imports a layer
above it."""
