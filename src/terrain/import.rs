//! glTF → terrain with a base Land.msh (terrain-notes §4.6).
