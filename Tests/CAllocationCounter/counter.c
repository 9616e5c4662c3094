int cac_placeholder;
