"""Simulator exports of USDF states: MuJoCo keyframes, SDFormat 1.12 ``<state>``."""
